/**
 * Custom headers per webhook: the 422 rules with exact locations, masking, encryption at rest, and the headers
 * arriving at a real loopback receiver on every attempt (retries and test fires), never across origins.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { webhooks } from "../../src/db/schema/index.ts";
import { createDeliveryWorker, type DeliveryWorker } from "../../src/modules/webhooks/delivery/worker.ts";
import { openHeaders, reservedHeaderReason } from "../../src/modules/webhooks/headers.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { emit, shipment } from "./fixtures.ts";
import { startReceiver, webhookEnv, type Receiver } from "./receiver.ts";

let ctx: TestContext;
let rx: Receiver;
let other: Receiver;
let worker: DeliveryWorker;
beforeAll(async () => {
  ctx = await testContext(await webhookEnv({ WEBHOOK_RETRY_SCHEDULE: "1,1,1,1,1" }));
  rx = await startReceiver();
  other = await startReceiver();
  worker = createDeliveryWorker({ ...ctx.deps });
});
afterAll(async () => {
  await worker.stop();
  rx.stop();
  other.stop();
  await ctx.close();
});

const TOKEN = "Bearer gw_0123456789abcdef";
const call = (key: string, method: string, body: unknown, path = "/v1/webhooks") =>
  ctx.call(path, { key, method, body: JSON.stringify(body) });
const hook = (path: string, over: Record<string, unknown> = {}) => ({
  url: rx.url(path),
  events: ["tracking.delivered"],
  mode: "test",
  ...over,
});
const locs = (b: { detail: { loc: unknown[] }[] }) => b.detail.map((d) => d.loc);

describe("validation", () => {
  test("reserved and malformed names are refused at their own loc; every problem at once", async () => {
    const a = await ctx.account("free");
    const bad = {
      Host: "x",
      "X-Webhook-Route": "x",
      "webhook-id": "x",
      "Content-Type": "x",
      "User-Agent": "x",
      "bad name": "x",
    };
    const [res, body] = await call(a.key, "POST", hook("/v", { headers: bad }));
    expect(res.status).toBe(422);
    // Six names, one over the limit of 5 too.
    expect(locs(body)).toEqual(
      expect.arrayContaining([...Object.keys(bad).map((n) => ["body", "headers", n]), ["body", "headers"]]),
    );
    for (const n of [
      "Connection",
      "keep-alive",
      "Proxy-Authorization",
      "TE",
      "Trailer",
      "transfer-encoding",
      "Upgrade",
      "x-service-signature",
      "X-WEBHOOK-SEQUENCE",
    ]) {
      const [r, b] = await call(a.key, "POST", hook("/v", { headers: { [n]: "v" } }));
      expect(r.status).toBe(422);
      expect(locs(b)).toEqual([["body", "headers", n]]);
    }
  });

  test("values: visible ASCII, inner spaces only, at most 1,000 characters", async () => {
    const a = await ctx.account("free");
    for (const v of [" lead", "trail ", "caf\u00e9", "a\nb", "x".repeat(1001)]) {
      const [r, b] = await call(a.key, "POST", hook("/v", { headers: { "X-Api-Key": v } }));
      expect(r.status).toBe(422);
      expect(locs(b)).toEqual([["body", "headers", "X-Api-Key"]]);
    }
    const [ok] = await call(a.key, "POST", hook("/v", { headers: { "X-Api-Key": `a \t${"x".repeat(996)}` } }));
    expect(ok.status).toBe(201);
  });

  test("the name classifier", () => {
    expect(reservedHeaderReason("Authorization")).toBeNull();
    expect(reservedHeaderReason("X-Route_1.v2")).toBeNull();
    for (const n of ["", "a:b", "a b", "Proxy-Foo", "content-md5", "Webhook-Signature"])
      expect(reservedHeaderReason(n)).not.toBeNull();
  });
});

describe("storage and view", () => {
  test("shown masked, stored encrypted for this webhook, replaced and removed by update", async () => {
    const a = await ctx.account("free");
    const [res, body] = await call(
      a.key,
      "POST",
      hook("/m", { headers: { Authorization: TOKEN, "X-Tenant": "acme" } }),
    );
    expect(res.status).toBe(201);
    expect(body.data.headers).toEqual({ Authorization: "Bear…••••", "X-Tenant": "••••" });
    const id = body.data.id as string;
    const [row] = await ctx.tdb.db.select().from(webhooks).where(eq(webhooks.id, id));
    expect(JSON.stringify(row)).not.toContain("gw_0123456789abcdef");
    expect(openHeaders(ctx.deps.secretsKey, id, row!.headersEnc)).toEqual({ Authorization: TOKEN, "X-Tenant": "acme" });
    // Sealed for this webhook: another id does not open it.
    expect(() => openHeaders(ctx.deps.secretsKey, "wh_another", row!.headersEnc)).toThrow();
    const [, got] = await call(a.key, "GET", undefined, `/v1/webhooks/${id}`);
    expect(got.data.headers).toEqual({ Authorization: "Bear…••••", "X-Tenant": "••••" });
    const [, kept] = await call(a.key, "PUT", { description: "x" }, `/v1/webhooks/${id}`);
    expect(kept.data.headers).toEqual({ Authorization: "Bear…••••", "X-Tenant": "••••" });
    const [, replaced] = await call(
      a.key,
      "PUT",
      { headers: { "X-Tenant": "globex-corporation" } },
      `/v1/webhooks/${id}`,
    );
    expect(replaced.data.headers).toEqual({ "X-Tenant": "glob…••••" });
    const [r422, b422] = await call(a.key, "PUT", { headers: { Host: "evil.test" } }, `/v1/webhooks/${id}`);
    expect(r422.status).toBe(422);
    expect(locs(b422)).toEqual([["body", "headers", "Host"]]);
    const [, cleared] = await call(a.key, "PUT", { headers: null }, `/v1/webhooks/${id}`);
    expect(cleared.data.headers).toEqual({});
    const [row2] = await ctx.tdb.db.select().from(webhooks).where(eq(webhooks.id, id));
    expect(row2!.headersEnc).toBeNull();
  });
});

describe("sending", () => {
  test("a test fire carries the headers", async () => {
    const a = await ctx.account("free");
    const [, body] = await call(a.key, "POST", hook("/tf", { headers: { Authorization: TOKEN, "X-Route": "eu-1" } }));
    const [res, fired] = await call(a.key, "POST", {}, `/v1/webhooks/${body.data.id}/test`);
    expect(res.status).toBe(200);
    expect(fired.data.delivered).toBe(true);
    const [got] = rx.on("/tf");
    expect(got!.headers.authorization).toBe(TOKEN);
    expect(got!.headers["x-route"]).toBe("eu-1");
    expect(got!.headers["x-webhook-mode"]).toBe("test");
  });

  test("every attempt of a live delivery carries them; a redirect to another origin does not", async () => {
    const a = await ctx.account("business");
    const [, body] = await call(a.key, "POST", hook("/live", { mode: "live", headers: { Authorization: TOKEN } }));
    expect(body.data.id).toMatch(/^wh_/);
    let n = 0;
    rx.route("/live", () =>
      ++n === 1
        ? new Response("down", { status: 503 })
        : new Response(null, { status: 307, headers: { location: other.url("/elsewhere") } }),
    );
    const shp = await shipment(ctx.tdb.db, [a.id]);
    expect(await emit(ctx.tdb.db, shp, "tracking.delivered", new Date(ctx.clock.now()))).toBe(1);
    expect(await worker.runOnce()).toBe(1);
    ctx.clock.advance(1000);
    expect(await worker.runOnce()).toBe(1);
    const live = rx.on("/live");
    expect(live.length).toBe(2);
    for (const r of live) expect(r.headers.authorization).toBe(TOKEN);
    const [moved] = other.on("/elsewhere");
    expect(moved!.headers["x-service-signature"]).toMatch(/^sha256=/);
    expect(moved!.headers.authorization).toBeUndefined();
  });
});
