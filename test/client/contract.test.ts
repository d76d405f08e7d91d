/**
 * The contract: the OpenAPI document is valid (a real validator,
 * @apidevtools/swagger-parser), every operation is complete, the examples
 * match their schemas, the webhooks section describes the five events, and
 * the live responses — every success and each error a test can provoke —
 * validate against the document (status documented, body valid, error code
 * among the codes documented for that status).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { setStatus, setUsage } from "../../src/modules/accounts/service.ts";
import { EVENT_TYPES, WEBHOOK_EVENT_TYPES } from "../../src/domain/events.ts";
import { ERROR_CODES } from "../../src/lib/errors.ts";
import { AUDITS_PER_HOUR } from "../../src/modules/webhooks/audit.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";
import { docValidator, type DocValidator } from "./openapi.ts";

let ctx: TestContext;
let v: DocValidator;
let receiver: Receiver;
/** `operationId status` pairs seen live, checked for coverage at the end. */
const seen = new Set<string>();

beforeAll(async () => {
  receiver = await startReceiver();
  ctx = await testContext(await webhookEnv());
  const [, doc] = await ctx.call("/openapi.json");
  v = docValidator(doc);
});
afterAll(async () => {
  receiver?.stop();
  await ctx?.close();
});

const METHODS = ["get", "put", "post", "delete", "patch"];
const operations = () =>
  Object.entries(v.doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ path, method, op })),
  );

/** Calls the app and validates the answer against the document. Returns `[res, body]`. */
async function call(path: string, init: RequestInit & { key?: string } = {}): Promise<[Response, any]> {
  const method = (init.method ?? "GET").toLowerCase();
  const [res, body] = await ctx.call(path, init);
  const url = new URL(path, "http://x");
  const found = v.operation(method, url.pathname);
  expect(found, `${method} ${url.pathname} is documented`).toBeDefined();
  const { template, op } = found!;
  const status = String(res.status);
  const response = op.responses[status];
  expect(
    response,
    `${op.operationId}: status ${status} is documented (body ${JSON.stringify(body).slice(0, 200)})`,
  ).toBeDefined();
  expect(res.headers.get("x-request-id")).toBeTruthy();
  if (res.status !== 204) {
    expect(
      v.errors(body, "paths", template, method, "responses", status, "content", "application/json", "schema"),
    ).toEqual([]);
    if (res.status >= 400 && res.status !== 422) {
      const codes = Object.keys(response.content["application/json"].examples ?? {});
      expect(codes, `${op.operationId} ${status}`).toContain(body.error.code);
    }
  } else expect(body).toBeNull();
  seen.add(`${op.operationId} ${status}`);
  return [res, body];
}

describe("the document", () => {
  test("passes @apidevtools/swagger-parser validation (OpenAPI 3.1 schema, $refs resolve)", async () => {
    const api = (await SwaggerParser.validate(structuredClone(v.doc) as never)) as {
      openapi: string;
      info: { version: string };
    };
    expect(api.openapi).toBe("3.1.0");
    expect(api.info.version).toBe("1.0.0");
  });

  test("every operation has an operationId, summary, description, a declared tag, security, examples and its documented errors", () => {
    const tags = new Set((v.doc.tags as { name: string }[]).map((t) => t.name));
    const ids = new Set<string>();
    for (const { path, method, op } of operations()) {
      const where = `${method} ${path}`;
      expect(op.operationId, where).toMatch(/^[a-z][A-Za-z]+$/);
      expect(ids.has(op.operationId), `${where} unique operationId`).toBe(false);
      ids.add(op.operationId);
      expect(op.summary?.length, where).toBeGreaterThan(3);
      expect(op.description?.length, where).toBeGreaterThan(10);
      expect(op.tags?.length, where).toBe(1);
      expect(tags.has(op.tags[0]), where).toBe(true);
      expect(Array.isArray(op.security), where).toBe(true);
      const authed = path.startsWith("/v1/");
      expect(op.security, where).toEqual(authed ? [{ ApiKeyAuth: [] }] : []);
      for (const p of op.parameters ?? []) expect(p.example, `${where} parameter ${p.name}`).toBeDefined();
      if (op.requestBody) {
        const media = op.requestBody.content["application/json"];
        expect(media.example, `${where} body example`).toBeDefined();
        expect(
          v.errors(media.example, "paths", path, method, "requestBody", "content", "application/json", "schema"),
          where,
        ).toEqual([]);
      }
      const statuses = Object.keys(op.responses);
      expect(statuses.filter((s) => s.startsWith("2")).length, where).toBe(1);
      expect(statuses, where).toEqual(expect.arrayContaining(["422", "500", ...(authed ? ["401", "429"] : [])]));
      if (op.requestBody) expect(statuses, where).toContain("413");
      for (const [status, r] of Object.entries(op.responses as Record<string, any>)) {
        expect(r.description?.length, `${where} ${status}`).toBeGreaterThan(2);
        expect(r.headers?.["X-Request-Id"], `${where} ${status}`).toBeDefined();
        if (status === "204") continue;
        const media = r.content["application/json"];
        const examples = media.examples
          ? Object.values(media.examples as Record<string, { value: unknown }>).map((e) => e.value)
          : [media.example];
        expect(examples.length && examples[0] !== undefined, `${where} ${status} has examples`).toBe(true);
        for (const ex of examples)
          expect(
            v.errors(ex, "paths", path, method, "responses", status, "content", "application/json", "schema"),
            `${where} ${status}`,
          ).toEqual([]);
      }
    }
  }, 30_000);

  test("each error response's schema admits exactly the codes it has examples for (the codes are declared, not read from prose)", () => {
    for (const { path, method, op } of operations())
      for (const [status, r] of Object.entries(op.responses as Record<string, any>)) {
        if (Number(status) < 400 || status === "422") continue;
        const documented = Object.keys(r.content["application/json"].examples ?? {}).sort();
        const admitted = ERROR_CODES.filter(
          (code) =>
            v.errors(
              { success: false, error: { code, message: "m" } },
              "paths",
              path,
              method,
              "responses",
              status,
              "content",
              "application/json",
              "schema",
            ).length === 0,
        );
        expect(([...admitted] as string[]).sort(), `${method} ${path} ${status}`).toEqual(documented);
      }
  });

  test("the webhooks section describes every event, its payload and the signature headers", () => {
    expect(Object.keys(v.doc.webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    for (const event of WEBHOOK_EVENT_TYPES) {
      const op = v.doc.webhooks[event].post;
      const headers = Object.fromEntries(
        (op.parameters as { name: string; in: string; required: boolean }[]).map((p) => [p.name, p]),
      );
      expect(Object.keys(headers).sort()).toEqual([
        "X-Service-Signature",
        "X-Webhook-Delivery",
        "X-Webhook-Event",
        "X-Webhook-Event-Id",
        "X-Webhook-Mode",
        "webhook-id",
        "webhook-signature",
        "webhook-timestamp",
      ]);
      for (const h of Object.values(headers)) expect(h.in === "header" && h.required).toBe(true);
      const media = op.requestBody.content["application/json"];
      expect(
        v.errors(media.example, "webhooks", event, "post", "requestBody", "content", "application/json", "schema"),
      ).toEqual([]);
      expect(
        v.errors(
          { ...media.example, event: event === "tracking.updated" ? "tracking.delivered" : "tracking.updated" },
          "webhooks",
          event,
          "post",
          "requestBody",
          "content",
          "application/json",
          "schema",
        ).length,
      ).toBeGreaterThan(0);
    }
  });
});

describe("live responses validate against the document", () => {
  test("couriers, plans, detect: success, 401, 404 with did_you_mean, 422", async () => {
    const a = await ctx.account("free");
    await call("/v1/couriers", { key: a.key });
    await call("/v1/couriers/delhivery", { key: a.key });
    await call("/v1/couriers/delhivery/health", { key: a.key });
    const [, nf] = await call("/v1/couriers/delhivry", { key: a.key });
    expect(nf.error).toMatchObject({ code: "COURIER_NOT_FOUND", did_you_mean: "delhivery" });
    await call("/v1/couriers/detect?tracking_number=1234567890120", { key: a.key });
    await call("/v1/couriers/detect", { key: a.key });
    await call("/v1/couriers");
    await call("/v1/couriers/dhl", { key: "ctk_not_a_real_key" });
    await call("/billing/plans");
  });

  test("estimates: 200 (an empty list without history), 404 with did_you_mean, 422", async () => {
    const a = await ctx.account("free");
    const [, ok] = await call("/v1/estimates?origin=400001&destination=Bengaluru", { key: a.key });
    expect(ok.data).toMatchObject({ estimates: [], reason: "not_enough_history" });
    await call("/v1/estimates?origin=400001&destination=560001&courier=delhivry", { key: a.key });
    await call("/v1/estimates?origin=000001&destination=560001", { key: a.key });
  });

  test("tracking: 200 and every error the sandbox can provoke (400, 401, 402 both codes, 404 both codes, 422, 502, 504)", async () => {
    const a = await ctx.account("free");
    const track = (courier: string, n: string, key = a.key) =>
      call(`/v1/track?courier=${courier}&tracking_number=${n}`, { key });
    const [, ok] = await track("delhivery", "1234567890120");
    expect(ok.data.ShipmentState).toBe("delivered");
    await track("delhivery", "1234567890127");
    await track("delhivery", "12AB");
    await track("delhivry", "1234567890120");
    await track("delhivery", "1234567890124");
    await track("delhivery", "1234567890126");
    await track("delhivery", "1234567890125");
    await call("/v1/track?courier=delhivery", { key: a.key });
    await track("delhivery", "1234567890120", "");
    // The failed lookups' units go back after their answers: settle them before writing the month row directly.
    await ctx.deps.services.quotaLeases.returnAll();
    await setStatus(ctx.tdb.db, a.id, "needs_attention");
    expect((await track("delhivery", "1234567890120"))[1].error.code).toBe("ACCOUNT_NEEDS_ATTENTION");
    await setStatus(ctx.tdb.db, a.id, "active");
    await setUsage(ctx.tdb.db, a.id, 100, ctx.clock.now());
    expect((await track("delhivery", "1234567890120"))[1].error.code).toBe("QUOTA_EXCEEDED");
  }, 30_000);

  test("rate limit: 429 RATE_LIMITED on the 11th request of a free account's minute", async () => {
    const a = await ctx.account("free");
    for (let i = 0; i < 10; i++) await call("/v1/couriers", { key: a.key });
    const [res] = await call("/v1/couriers", { key: a.key });
    expect(res.status).toBe(429);
  });

  test("demo: 200, 404, 422 and 429 DEMO_RATE_LIMITED after 5 an hour", async () => {
    const ip = { "x-forwarded-for": "203.0.113.9" };
    await call("/demo/track?courier=dhl&tracking_number=1234567890", { headers: ip });
    await call("/demo/track?courier=dhl", { headers: ip });
    await call("/demo/track?courier=nosuch&tracking_number=1234567890", { headers: ip });
    for (let i = 0; i < 5; i++) await call("/demo/track?courier=dhl&tracking_number=1234567890", { headers: ip });
    const [res, body] = await call("/demo/track?courier=dhl&tracking_number=1234567890", { headers: ip });
    expect([res.status, body.error.code]).toEqual([429, "DEMO_RATE_LIMITED"]);
  }, 30_000);

  test("webhooks: every operation's success, 403, 404, 409 (live test fire, limit), 413, 422; the test delivery matches the webhooks section", async () => {
    const a = await ctx.account("growth");
    const json = (method: string, body: unknown) => ({
      method,
      key: a.key,
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    const [, created] = await call(
      "/v1/webhooks",
      json("POST", {
        url: receiver.url("/contract"),
        events: ["tracking.delivered"],
        mode: "test",
        description: "contract",
      }),
    );
    const id = created.data.id as string;
    await call("/v1/webhooks", { key: a.key });
    await call(`/v1/webhooks/${id}`, { key: a.key });
    await call(`/v1/webhooks/${id}`, json("PUT", { events: [...EVENT_TYPES] }));
    const [, fired] = await call(`/v1/webhooks/${id}/test`, json("POST", { event: "tracking.exception" }));
    expect(fired.data.delivered).toBe(true);
    await call(`/v1/webhooks/${id}/test`, json("POST", "null"));
    // The contract receiver answers 200 to everything: the report validates and says which cases it let through.
    const [, audit] = await call(`/v1/webhooks/${id}/audit`, json("POST", {}));
    expect(audit.data.verdict).toBe("failed");
    for (let i = 1; i < AUDITS_PER_HOUR; i++) await call(`/v1/webhooks/${id}/audit`, json("POST", {}));
    const [overAudits] = await call(`/v1/webhooks/${id}/audit`, json("POST", {}));
    expect(overAudits.status).toBe(429);
    await call(`/v1/webhooks/${id}/deliveries`, { key: a.key });
    await call("/v1/webhooks/rotate-secret", { method: "POST", key: a.key });
    await call("/v1/webhooks", json("POST", { url: "http://example.com/x", events: [], mode: "sometimes" }));
    await call("/v1/webhooks", json("POST", "{not json"));
    await call(
      "/v1/webhooks",
      json("POST", {
        url: receiver.url("/contract"),
        events: ["tracking.delivered"],
        mode: "test",
        description: "x".repeat(70_000),
      }),
    );
    await call("/v1/webhooks/wh_nope", { key: a.key });
    const [, live] = await call(
      "/v1/webhooks",
      json("POST", { url: receiver.url("/live"), events: ["tracking.delivered"], mode: "live" }),
    );
    await call(`/v1/webhooks/${live.data.id}/test`, json("POST", {}));
    for (let i = 0; i < 8; i++)
      await call(
        "/v1/webhooks",
        json("POST", { url: receiver.url(`/n${i}`), events: ["tracking.delivered"], mode: "test" }),
      );
    const [limit] = await call(
      "/v1/webhooks",
      json("POST", { url: receiver.url("/over"), events: ["tracking.delivered"], mode: "test" }),
    );
    expect(limit.status).toBe(409);
    await call(`/v1/webhooks/${id}`, { method: "DELETE", key: a.key });
    await call(`/v1/webhooks/${id}`, { method: "DELETE", key: a.key });
    const free = await ctx.account("free");
    await call("/v1/webhooks", {
      method: "POST",
      key: free.key,
      body: JSON.stringify({ url: receiver.url("/x"), events: ["tracking.delivered"], mode: "live" }),
    });

    // The deliveries the test fires made validate against the webhooks section, headers included.
    const got = receiver.on("/contract");
    expect(got.length).toBe(2 + 4 * AUDITS_PER_HOUR);
    for (const d of got.filter((d) => d.headers["x-webhook-audit"] === undefined)) {
      const event = d.json.event as string;
      const op = v.doc.webhooks[event].post;
      expect(
        v.errors(d.json, "webhooks", event, "post", "requestBody", "content", "application/json", "schema"),
      ).toEqual([]);
      op.parameters.forEach((p: { name: string }, i: number) => {
        expect(
          v.errors(d.headers[p.name.toLowerCase()], "webhooks", event, "post", "parameters", String(i), "schema"),
          p.name,
        ).toEqual([]);
      });
    }
  }, 30_000);

  test("shipments, events, redeliver/recover, courier=auto and Idempotency-Key: successes and their errors", async () => {
    const a = await ctx.account("growth");
    const json = (method: string, body?: unknown, headers: Record<string, string> = {}) => ({
      method,
      key: a.key,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const [, followed] = await call(
      "/v1/shipments",
      json("POST", {
        shipments: [
          { courier: "delhivery", tracking_number: "1234567890121" },
          { courier: "auto", tracking_number: "1234567890" },
        ],
      }),
    );
    expect(followed.data.shipments.map((s: { result: string }) => s.result)).toEqual(["accepted", "invalid"]);
    await call("/v1/shipments", json("POST", { shipments: [] }));
    await call("/v1/shipments?state=pending&limit=5", { key: a.key });
    await call("/v1/shipments/delhivery/1234567890121", { key: a.key });
    await call("/v1/shipments/delhivery/1234567890999", { key: a.key });
    const [, changed] = await call(
      "/v1/shipments/delhivery/1234567890121",
      json("PATCH", { reference: "ORD-1", metadata: { channel: "web" } }),
    );
    expect(changed.data).toMatchObject({ reference: "ORD-1", metadata: { channel: "web" } });
    await call("/v1/shipments/delhivery/1234567890999", json("PATCH", { reference: null }));
    await call("/v1/shipments/delhivery/1234567890121", json("PATCH", { metadata: { "bad key": "v" } }));
    await call("/v1/shipments?reference=ORD-1", { key: a.key });
    const [, rotated] = await call("/v1/shipments/delhivery/1234567890121/public-link/rotate", json("POST"));
    expect(rotated.data.public_url).toMatch(/\/t\/[A-Za-z0-9_-]{43}$/);
    await call("/v1/shipments/delhivery/1234567890999/public-link/rotate", json("POST"));
    await call("/v1/account/branding", { key: a.key });
    await call("/v1/account/branding", json("PATCH", { display_name: "Shop", accent_color: "#0b57d0" }));
    await call("/v1/account/branding", json("PATCH", { accent_color: "#ffff00" }));
    const [advanced] = await call("/v1/sandbox/shipments/delhivery/1234567890121/advance", {
      method: "POST",
      key: a.key,
    });
    expect(advanced.status).toBe(200);
    await call("/v1/sandbox/shipments/nosuch/1234567890121/advance", { method: "POST", key: a.key });
    const [, unfollowed] = await call("/v1/sandbox/shipments/delhivery/1234567890131/advance", {
      method: "POST",
      key: a.key,
    });
    expect(unfollowed.error.code).toBe("SHIPMENT_NOT_FOLLOWED");
    const other = await ctx.account("growth");
    await call("/v1/track?courier=delhivery&tracking_number=1234567890121", { key: other.key });
    const [, shared] = await call("/v1/sandbox/shipments/delhivery/1234567890121/advance", {
      method: "POST",
      key: a.key,
    });
    expect(shared.error.code).toBe("SANDBOX_SHIPMENT_SHARED");
    await call("/v1/shipments/delhivery/1234567890121", { method: "DELETE", key: a.key });
    await call("/v1/shipments/delhivery/1234567890121", { method: "DELETE", key: a.key });
    const [, ambiguous] = await call("/v1/track?courier=auto&tracking_number=1234567890", { key: a.key });
    expect(ambiguous.error.code).toBe("COURIER_AMBIGUOUS");
    const [, auto] = await call("/v1/track?courier=auto&tracking_number=1Z12345E0205277680", { key: a.key });
    expect(auto.detected_courier).toBe("ups");
    await call("/v1/events?type=tracking.delivered", { key: a.key });
    // NDR actions (docs/ndr-actions.md): 202, the list, and each refusal before the courier.
    await call("/v1/track?courier=delhivery&tracking_number=1234567890203", { key: a.key });
    const [created] = await call(
      "/v1/shipments/delhivery/1234567890203/actions",
      json("POST", { action: "reattempt" }),
    );
    expect(created.status).toBe(202);
    const [busy] = await call("/v1/shipments/delhivery/1234567890203/actions", json("POST", { action: "reattempt" }));
    expect(busy.status).toBe(409);
    await call("/v1/shipments/delhivery/1234567890203/actions", { key: a.key });
    await call("/v1/shipments/delhivery/1234567890999/actions", { key: a.key });
    await call("/v1/shipments/delhivery/1234567890999/actions", json("POST", { action: "reattempt" }));
    await call("/v1/shipments/delhivery/1234567890203/actions", json("POST", { action: "nope" }));
    const starter = await ctx.account("starter");
    await call("/v1/track?courier=delhivery&tracking_number=1234567890203", { key: starter.key });
    const [gated] = await call("/v1/shipments/delhivery/1234567890203/actions", {
      method: "POST",
      key: starter.key,
      body: JSON.stringify({ action: "reattempt" }),
    });
    expect(gated.status).toBe(403);

    const [, wh] = await call(
      "/v1/webhooks",
      json(
        "POST",
        { url: receiver.url("/replay"), events: ["tracking.delivered"], mode: "test" },
        { "idempotency-key": "contract-create" },
      ),
    );
    const [replayed] = await call(
      "/v1/webhooks",
      json(
        "POST",
        { url: receiver.url("/replay"), events: ["tracking.delivered"], mode: "test" },
        { "idempotency-key": "contract-create" },
      ),
    );
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    const [, reused] = await call(
      "/v1/webhooks",
      json(
        "POST",
        { url: receiver.url("/other"), events: ["tracking.delivered"], mode: "test" },
        { "idempotency-key": "contract-create" },
      ),
    );
    expect(reused.detail).toEqual([
      expect.objectContaining({ loc: ["header", "Idempotency-Key"], type: "idempotency_key_reused" }),
    ]);
    await call(`/v1/webhooks/${wh.data.id}/test`, json("POST", {}));
    const [, dl] = await call(`/v1/webhooks/${wh.data.id}/deliveries`, { key: a.key });
    await call(`/v1/webhooks/${wh.data.id}/deliveries/${dl.data.deliveries[0].id}/redeliver`, json("POST"));
    await call(`/v1/webhooks/${wh.data.id}/deliveries/dlv_nope/redeliver`, json("POST"));
    await call(
      `/v1/webhooks/${wh.data.id}/recover`,
      json("POST", { since: new Date(ctx.clock.now() - 3600_000).toISOString() }),
    );
    await call(`/v1/webhooks/${wh.data.id}/recover`, json("POST", { since: "2001-01-01T00:00:00Z" }));
    await call("/v1/webhooks/wh_nope/recover", json("POST", { since: new Date(ctx.clock.now()).toISOString() }));
  }, 30_000);

  test("coverage: every operation's success status was exercised live", () => {
    for (const { op } of operations()) {
      const success = Object.keys(op.responses).find((s) => s.startsWith("2"));
      expect(seen.has(`${op.operationId} ${success}`), `${op.operationId} ${success}`).toBe(true);
    }
    const errors = [...seen].filter((s) => !/ 2\d\d$/.test(s));
    // 401, 402, 403, 404, 409, 413, 422, 429, 502, 504 were provoked; 500 and 503 need a broken database.
    for (const status of ["400", "401", "402", "403", "404", "409", "413", "422", "429", "502", "504"])
      expect(
        errors.some((s) => s.endsWith(` ${status}`)),
        status,
      ).toBe(true);
  });
});
