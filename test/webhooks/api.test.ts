/**
 * The /v1/webhooks API: shapes, plan gate, secret-once semantics, limits,
 * cross-account isolation, 422 shapes, test fire and its kill-switch.
 * Receivers are real HTTPS servers on loopback.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { verify } from "@octokit/webhooks-methods";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema/index.ts";
import { DeliveryListResponse, TestFireResponse } from "../../src/modules/webhooks/delivery-model.ts";
import {
  CreatedWebhookResponse,
  SecretResponse,
  WebhookListResponse,
  WebhookResponse,
} from "../../src/modules/webhooks/model.ts";
import { decryptSecret } from "../../src/secrets/cipher.ts";
import { SECRET_NOTICE } from "../../src/modules/webhooks/service.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { startReceiver, webhookEnv, type Receiver } from "./receiver.ts";

let ctx: TestContext;
let rx: Receiver;
beforeAll(async () => {
  ctx = await testContext(await webhookEnv());
  rx = await startReceiver();
});
afterAll(async () => {
  rx.stop();
  await ctx.close();
});

const post = (key: string, body: unknown, path = "/v1/webhooks") =>
  ctx.call(path, { key, method: "POST", body: body === undefined ? undefined : JSON.stringify(body) });
const hook = (over: Record<string, unknown> = {}) => ({
  url: rx.url(),
  events: ["tracking.delivered", "tracking.exception"],
  mode: "test",
  ...over,
});
// Standard base64 of 32 bytes (what the Standard Webhooks libraries decode).
const SECRET_RE = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe("POST /v1/webhooks", () => {
  test("201 with the webhook and, on the account's first create, the raw secret; later creates get the notice", async () => {
    const a = await ctx.account("free");
    const [res, body] = await post(a.key, hook({ description: "orders" }));
    expect(res.status).toBe(201);
    expect(Value.Check(CreatedWebhookResponse, body)).toBe(true);
    expect(body.data).toMatchObject({
      url: rx.url(),
      events: ["tracking.delivered", "tracking.exception"],
      mode: "test",
      description: "orders",
      status: "active",
      failure_count: 0,
    });
    expect(body.data.id).toMatch(/^wh_[0-9a-f]{32}$/);
    expect(body.data.secret).toMatch(SECRET_RE);
    const [, second] = await post(a.key, hook());
    expect(second.data.secret).toBe(SECRET_NOTICE);
    expect(second.data.secret.startsWith("<")).toBe(true);
    // The secret is unchanged by the second create and stored encrypted.
    const [row] = await ctx.tdb.db.select().from(accounts).where(eq(accounts.id, a.id));
    expect(row!.webhookSecretEnc).not.toContain(body.data.secret);
    expect(decryptSecret(ctx.deps.secretsKey, a.id, row!.webhookSecretEnc!)).toBe(body.data.secret);
  });

  test("a rotation before any create shows the secret; the first create then gets the notice", async () => {
    const a = await ctx.account("free");
    const [r1, rot] = await post(a.key, undefined, "/v1/webhooks/rotate-secret");
    expect(r1.status).toBe(200);
    expect(Value.Check(SecretResponse, rot)).toBe(true);
    expect(rot.data.secret).toMatch(SECRET_RE);
    const [, created] = await post(a.key, hook());
    expect(created.data.secret).toBe(SECRET_NOTICE);
  });

  test("create, then rotate: rotation returns a new secret; deleting every webhook does not re-issue", async () => {
    const a = await ctx.account("free");
    const [, c1] = await post(a.key, hook());
    const [, rot] = await post(a.key, undefined, "/v1/webhooks/rotate-secret");
    expect(rot.data.secret).toMatch(SECRET_RE);
    expect(rot.data.secret).not.toBe(c1.data.secret);
    await ctx.call(`/v1/webhooks/${c1.data.id}`, { key: a.key, method: "DELETE" });
    const [, c2] = await post(a.key, hook());
    expect(c2.data.secret).toBe(SECRET_NOTICE);
  });

  test("concurrent first creates: exactly one response carries the secret", async () => {
    const a = await ctx.account("free");
    const all = await Promise.all(Array.from({ length: 5 }, () => post(a.key, hook())));
    expect(all.every(([r]) => r.status === 201)).toBe(true);
    expect(all.filter(([, b]) => SECRET_RE.test(b.data.secret))).toHaveLength(1);
  });

  test("plan gate: live is 403 PLAN_UPGRADE_REQUIRED on free, starter and pro; 201 on growth and business", async () => {
    for (const plan of ["free", "starter", "pro"] as const) {
      const a = await ctx.account(plan);
      const [res, body] = await post(a.key, hook({ mode: "live" }));
      expect(res.status).toBe(403);
      expect(body).toEqual({ success: false, error: { code: "PLAN_UPGRADE_REQUIRED", message: expect.any(String) } });
      const [ok] = await post(a.key, hook({ mode: "test" }));
      expect(ok.status).toBe(201);
    }
    for (const plan of ["growth", "business"] as const) {
      const a = await ctx.account(plan);
      const [res, body] = await post(a.key, hook({ mode: "live" }));
      expect(res.status).toBe(201);
      expect(body.data.mode).toBe("live");
    }
  });

  test("at most 10 webhooks: the 11th is 409 WEBHOOK_LIMIT_REACHED", async () => {
    const a = await ctx.account("business"); // free's 10 requests a minute would stop us first
    for (let i = 0; i < 10; i++) expect((await post(a.key, hook()))[0].status).toBe(201);
    const [res, body] = await post(a.key, hook());
    expect(res.status).toBe(409);
    expect(body.error.code).toBe("WEBHOOK_LIMIT_REACHED");
  });

  test("events are a set: duplicates collapse", async () => {
    const a = await ctx.account("free");
    const [, body] = await post(
      a.key,
      hook({ events: ["tracking.updated", "tracking.updated", "tracking.delivered"] }),
    );
    expect(body.data.events).toEqual(["tracking.updated", "tracking.delivered"]);
  });

  test("422 shapes: every problem at once, with pydantic types and body locations", async () => {
    const a = await ctx.account("free");
    const [res, body] = await post(a.key, {
      url: "https://example.com/h",
      events: ["tracking.delivered", "tracking.updated", "tracking.teleported"],
      mode: "prod",
    });
    expect(res.status).toBe(422);
    expect(body.detail).toEqual(
      expect.arrayContaining([
        { loc: ["body", "events", 2], msg: expect.any(String), type: "enum" },
        { loc: ["body", "mode"], msg: expect.any(String), type: "enum" },
      ]),
    );
    const [r2, b2] = await post(a.key, { events: [] });
    expect(r2.status).toBe(422);
    const locs = b2.detail.map((d: { loc: unknown[] }) => d.loc.join("."));
    expect(locs).toEqual(expect.arrayContaining(["body.url", "body.events", "body.mode"]));
    expect(b2.detail.find((d: { loc: unknown[] }) => d.loc[1] === "url").type).toBe("missing");
    const [r3, b3] = await ctx.call("/v1/webhooks", { key: a.key, method: "POST", body: "{not json" });
    expect(r3.status).toBe(422);
    expect(b3).toEqual({ detail: [{ loc: ["body"], msg: expect.any(String), type: "json_invalid" }] });
    const [r4, b4] = await post(a.key, hook({ url: "http://example.com/h" }));
    expect(r4.status).toBe(422);
    expect(b4.detail).toEqual([{ loc: ["body", "url"], msg: expect.any(String), type: "url_scheme" }]);
    const [r5, b5] = await post(a.key, hook({ url: `https://example.com/${"a".repeat(2100)}` }));
    expect(r5.status).toBe(422);
    expect(b5.detail[0]).toMatchObject({ loc: ["body", "url"], type: "string_too_long" });
  });

  test.each([
    "https://2130706433/h",
    "https://0x7f.1/h",
    "https://[::ffff:127.0.0.1]/h",
    "https://0.0.0.0/h",
    "https://169.254.169.254/h",
    "https://u:p@example.com/h",
    "https://10.1.2.3./h",
  ])("hostile URL %s → 422 at create (even with loopback allowed only for 127/8 and ::1)", async (url) => {
    const a = await ctx.account("free");
    // Loopback is allowed in this test configuration (WEBHOOK_ALLOW_PRIVATE_CIDRS=127.0.0.0/8), so the numeric,
    // hex and IPv4-mapped spellings of 127.0.0.1 are refused for their spelling alone (the URL pattern).
    const spelled = /2130706433|0x7f|::ffff:127/.test(url);
    const [res, body] = await post(a.key, hook({ url: spelled ? url.replace("/h", ":1/h") : url }));
    expect(res.status).toBe(422);
    expect(body.detail).toHaveLength(1);
    expect(body.detail[0].loc).toEqual(["body", "url"]);
    if (spelled) expect(body.detail[0].msg).toStartWith("URL should be https:// with a host name");
  });

  test("401 without a key", async () => {
    const [res, body] = await post("", hook());
    expect(res.status).toBe(401);
    expect(body.error.code).toBe("INVALID_API_KEY");
  });
});

describe("GET/PUT/DELETE /v1/webhooks/{id}", () => {
  test("list and get never show a secret; another account's id is 404 everywhere", async () => {
    const a = await ctx.account("growth");
    const b = await ctx.account("growth");
    const [, created] = await post(a.key, hook());
    const id = created.data.id;
    const [lr, list] = await ctx.call("/v1/webhooks", { key: a.key });
    expect(lr.status).toBe(200);
    expect(Value.Check(WebhookListResponse, list)).toBe(true);
    expect(list.data.count).toBe(1);
    expect(JSON.stringify(list)).not.toContain("secret");
    const [gr, got] = await ctx.call(`/v1/webhooks/${id}`, { key: a.key });
    expect(gr.status).toBe(200);
    expect(Value.Check(WebhookResponse, got)).toBe(true);
    expect(got.data.secret).toBeUndefined();
    expect((await ctx.call("/v1/webhooks", { key: b.key }))[1].data.count).toBe(0);
    for (const [method, path, body] of [
      ["GET", `/v1/webhooks/${id}`, undefined],
      ["PUT", `/v1/webhooks/${id}`, { description: "x" }],
      ["DELETE", `/v1/webhooks/${id}`, undefined],
      ["POST", `/v1/webhooks/${id}/test`, undefined],
      ["GET", `/v1/webhooks/${id}/deliveries`, undefined],
      ["GET", `/v1/webhooks/wh_nope`, undefined],
    ] as const) {
      const [res, err] = await ctx.call(path, { key: b.key, method, body: body ? JSON.stringify(body) : undefined });
      expect([method, path, res.status]).toEqual([method, path, 404]);
      expect(err.error.code).toBe("WEBHOOK_NOT_FOUND");
    }
    expect((await ctx.call(`/v1/webhooks/${id}`, { key: a.key }))[0].status).toBe(200);
  });

  test("PUT is partial; switching to live passes the plan gate; status active reactivates and resets the count", async () => {
    const free = await ctx.account("free");
    const [, c] = await post(free.key, hook({ description: "d1" }));
    const [r1, u1] = await ctx.call(`/v1/webhooks/${c.data.id}`, {
      key: free.key,
      method: "PUT",
      body: JSON.stringify({ events: ["tracking.updated"] }),
    });
    expect(r1.status).toBe(200);
    expect(u1.data).toMatchObject({ events: ["tracking.updated"], description: "d1", url: rx.url(), mode: "test" });
    expect(u1.data.secret).toBeUndefined();
    const [r2, u2] = await ctx.call(`/v1/webhooks/${c.data.id}`, {
      key: free.key,
      method: "PUT",
      body: JSON.stringify({ mode: "live" }),
    });
    expect(r2.status).toBe(403);
    expect(u2.error.code).toBe("PLAN_UPGRADE_REQUIRED");

    const g = await ctx.account("growth");
    const [, lc] = await post(g.key, hook({ mode: "live" }));
    await ctx.tdb.sql`update webhooks set status = 'deactivated', failure_count = 20 where id = ${lc.data.id}`;
    const [r3, u3] = await ctx.call(`/v1/webhooks/${lc.data.id}`, {
      key: g.key,
      method: "PUT",
      body: JSON.stringify({ status: "active" }),
    });
    expect(r3.status).toBe(200);
    expect(u3.data).toMatchObject({ status: "active", failure_count: 0, mode: "live" });
    const [r4, u4] = await ctx.call(`/v1/webhooks/${lc.data.id}`, {
      key: g.key,
      method: "PUT",
      body: JSON.stringify({ status: "deactivated" }),
    });
    expect(r4.status).toBe(422);
    expect(u4.detail[0].loc).toEqual(["body", "status"]);
    const [r5, u5] = await ctx.call(`/v1/webhooks/${lc.data.id}`, {
      key: g.key,
      method: "PUT",
      body: JSON.stringify({ url: "https://10.0.0.1/x" }),
    });
    expect(r5.status).toBe(422);
    expect(u5.detail[0].loc).toEqual(["body", "url"]);
  });

  test("DELETE is 204 with no body, then 404", async () => {
    const a = await ctx.account("free");
    const [, c] = await post(a.key, hook());
    const [res, body] = await ctx.call(`/v1/webhooks/${c.data.id}`, { key: a.key, method: "DELETE" });
    expect(res.status).toBe(204);
    expect(body).toBeNull();
    expect((await ctx.call(`/v1/webhooks/${c.data.id}`, { key: a.key }))[0].status).toBe(404);
  });
});

describe("POST /v1/webhooks/{id}/test", () => {
  test("one signed sample delivery to a test webhook, recorded in the attempt log", async () => {
    const a = await ctx.account("free");
    const path = `/test-fire-${a.id}`;
    const [, c] = await post(
      a.key,
      hook({ url: rx.url(path), events: ["tracking.out_for_delivery", "tracking.delivered"] }),
    );
    const secret = c.data.secret as string;
    const [res, body] = await post(a.key, undefined, `/v1/webhooks/${c.data.id}/test`);
    expect(res.status).toBe(200);
    expect(Value.Check(TestFireResponse, body)).toBe(true);
    expect(body.data).toMatchObject({ delivered: true, status_code: 200 });
    const [got] = rx.on(path);
    expect(got!.headers["x-webhook-mode"]).toBe("test");
    expect(got!.headers["x-webhook-event"]).toBe("tracking.out_for_delivery");
    expect(got!.headers["x-webhook-delivery"]).toBe(`${c.data.id}-1`);
    expect(got!.json.event).toBe("tracking.out_for_delivery");
    expect(got!.json.data.courier).toStartWith("synthetic-test-");
    expect(got!.json.data.status).toBe("out_for_delivery");
    expect(await verify(secret, got!.text, got!.headers["x-service-signature"]!)).toBe(true);

    // Explicit event; a receiver failure is reported, not retried.
    rx.route(path, () => new Response("nope", { status: 500 }));
    const [r2, b2] = await post(a.key, { event: "tracking.exception" }, `/v1/webhooks/${c.data.id}/test`);
    expect(r2.status).toBe(200);
    expect(b2.data).toMatchObject({ delivered: false, status_code: 500 });
    expect(rx.on(path).at(-1)!.json.data.status).toBe("exception");

    const [lr, list] = await ctx.call(`/v1/webhooks/${c.data.id}/deliveries`, { key: a.key });
    expect(lr.status).toBe(200);
    expect(Value.Check(DeliveryListResponse, list)).toBe(true);
    expect(list.data.deliveries.map((d: { state: string }) => d.state)).toEqual(["abandoned", "delivered"]);
    expect(list.data.deliveries[0].attempt_log[0]).toMatchObject({
      attempt: 1,
      status_code: 500,
      response_snippet: "nope",
      url: rx.url(path),
    });
    const [, page] = await ctx.call(`/v1/webhooks/${c.data.id}/deliveries?limit=1`, { key: a.key });
    expect(page.data.count).toBe(1);
    const [, page2] = await ctx.call(`/v1/webhooks/${c.data.id}/deliveries?limit=1&cursor=${page.data.next_cursor}`, {
      key: a.key,
    });
    expect(page2.data.deliveries[0].state).toBe("delivered");
    expect(page2.data.next_cursor).toBeNull();
  });

  test("a live webhook is 409 WEBHOOK_IS_LIVE; a bad event is 422", async () => {
    const a = await ctx.account("growth");
    const [, c] = await post(a.key, hook({ mode: "live" }));
    const [res, body] = await post(a.key, null, `/v1/webhooks/${c.data.id}/test`);
    expect(res.status).toBe(409);
    expect(body.error.code).toBe("WEBHOOK_IS_LIVE");
    const [, t] = await post(a.key, hook());
    const [r2, b2] = await post(a.key, { event: "tracking.nope" }, `/v1/webhooks/${t.data.id}/test`);
    expect(r2.status).toBe(422);
    expect(b2.detail[0].loc).toEqual(["body", "event"]);
  });

  test("kill-switch: TEST_WEBHOOKS_ENABLED=false → 503 TEST_WEBHOOKS_DISABLED (test fire and audit)", async () => {
    const off = await testContext(await webhookEnv({ TEST_WEBHOOKS_ENABLED: "false" }));
    try {
      const a = await off.account("free");
      const [, c] = await off.call("/v1/webhooks", { key: a.key, method: "POST", body: JSON.stringify(hook()) });
      const [res, body] = await off.call(`/v1/webhooks/${c.data.id}/test`, { key: a.key, method: "POST" });
      expect(res.status).toBe(503);
      expect(body.error.code).toBe("TEST_WEBHOOKS_DISABLED");
      // The receiver audit sends test deliveries too: the same switch stops it, before its hourly count.
      const [audit, auditBody] = await off.call(`/v1/webhooks/${c.data.id}/audit`, { key: a.key, method: "POST" });
      expect([audit.status, auditBody.error.code]).toEqual([503, "TEST_WEBHOOKS_DISABLED"]);
      expect(await off.tdb.sql`select 1 from rate_windows where key like 'webhook-audit:%'`).toHaveLength(0);
    } finally {
      await off.close();
    }
  });
});

describe("OpenAPI", () => {
  test("every webhook operation is documented with its id and error responses", async () => {
    const [, doc] = await ctx.call("/openapi.json");
    const ops = Object.entries(
      doc.paths as Record<
        string,
        Record<string, { operationId?: string; responses?: Record<string, unknown>; tags?: string[] }>
      >,
    )
      .filter(([p]) => p.startsWith("/v1/webhooks"))
      .flatMap(([, m]) => Object.values(m));
    expect(ops.map((o) => o.operationId).sort()).toEqual(
      [
        "auditWebhookReceiver",
        "createWebhook",
        "deleteWebhook",
        "getWebhook",
        "listWebhookDeliveries",
        "listWebhooks",
        "recoverWebhookDeliveries",
        "redeliverWebhookDelivery",
        "rotateWebhookSecret",
        "testWebhook",
        "updateWebhook",
      ].sort(),
    );
    for (const o of ops) {
      expect(o.tags).toEqual(["Webhooks"]);
      expect(Object.keys(o.responses ?? {})).toEqual(expect.arrayContaining(["401", "422", "429", "500"]));
    }
  });
});
