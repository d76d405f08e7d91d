/**
 * The sandbox on demand: `POST /v1/sandbox/shipments/{courier}/{tracking_number}/advance` moves a simulated shipment
 * to its next scripted state, re-checks it through the normal path, and its webhook reaches a loopback receiver;
 * digit 3's failed attempt carries its normalised reason (docs/ndr.md). Only shipments the caller alone follows,
 * under Idempotency-Key, within the per-account limit; …991 revises the courier's EDD (docs/spec-map.md#sandbox).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Resolver } from "../../src/modules/webhooks/delivery/address-guard.ts";
import { createDeliveryWorker, type DeliveryWorker } from "../../src/modules/webhooks/delivery/worker.ts";
import { courierBySlug } from "../../src/modules/couriers/catalogue.ts";
import { recordFetch } from "../../src/modules/following/store.ts";
import { soleFollowerSink } from "../../src/modules/tracking/sandbox-guard.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";

const resolver: Resolver = async (host) => {
  if (host !== "receiver.test") throw Object.assign(new Error(`fake resolver: ${host} unknown`), { code: "ENOTFOUND" });
  return [{ address: "127.0.0.1", family: 4 }];
};

let ctx: TestContext;
let rx: Receiver;
let worker: DeliveryWorker;
beforeAll(async () => {
  ctx = await testContext(await webhookEnv());
  rx = await startReceiver();
  worker = createDeliveryWorker({ ...ctx.deps, resolver });
});
afterAll(async () => {
  await worker.stop();
  rx.stop();
  await ctx.close();
});

describe("sandbox advance", () => {
  test("moves a digit-1 shipment to its next state now, and the webhook arrives", async () => {
    const acc = await ctx.account("business");
    const [wh, whBody] = await ctx.call("/v1/webhooks", {
      key: acc.key,
      method: "POST",
      body: JSON.stringify({
        url: rx.url("/adv"),
        events: ["tracking.updated", "tracking.in_transit", "tracking.out_for_delivery", "tracking.delivered"],
        mode: "live",
      }),
    });
    expect(wh.status).toBe(201);
    expect(whBody.data.id).toBeString();
    const [r0, b0] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890111", { key: acc.key });
    expect(r0.status).toBe(200);
    const before = b0.data.Checkpoints.length;
    const [r1, b1] = await ctx.call("/v1/sandbox/shipments/delhivery/1234567890111/advance", {
      key: acc.key,
      method: "POST",
    });
    expect(r1.status).toBe(200);
    expect(b1.data.Checkpoints.length).toBe(before + 1);
    expect(b1.data.ShipmentState).toBe("intransit");
    expect(await worker.runOnce()).toBe(1);
    const got = rx.on("/adv");
    expect(got.length).toBe(1);
    const payload = JSON.parse(got[0]!.text);
    expect(payload.data.tracking_number).toBe("1234567890111");
    expect(payload.data.checkpoints.length).toBe(before + 1);
    // Twice more: reached destination, then out for delivery.
    await ctx.call("/v1/sandbox/shipments/delhivery/1234567890111/advance", { key: acc.key, method: "POST" });
    const [, b3] = await ctx.call("/v1/sandbox/shipments/delhivery/1234567890111/advance", {
      key: acc.key,
      method: "POST",
    });
    expect(b3.data.ShipmentState).toBe("outfordelivery");
  });

  test("needs an API key", async () => {
    const [res] = await ctx.call("/v1/sandbox/shipments/delhivery/1234567890111/advance", { method: "POST" });
    expect(res.status).toBe(401);
  });

  test("digit 3: the failed attempt's reason is customer_unavailable; …263 gives out_of_delivery_area", async () => {
    const acc = await ctx.account("business");
    const [, b] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890133", { key: acc.key });
    const failed = b.data.Checkpoints.find((c: { CheckpointState: string }) => c.CheckpointState === "exception");
    expect(failed.ReasonCode).toBe("customer_unavailable");
    expect(b.data.Checkpoints.filter((c: { ReasonCode: string }) => c.ReasonCode === "").length).toBe(
      b.data.Checkpoints.length - 1,
    );
    const [, c] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890263", { key: acc.key });
    expect(
      c.data.Checkpoints.find((x: { CheckpointState: string }) => x.CheckpointState === "exception").ReasonCode,
    ).toBe("out_of_delivery_area");
  });
});

describe("outside sandbox mode", () => {
  test("the route does not exist and is not in the document", async () => {
    const live = await testContext({ COURIER_MODE: "live" });
    try {
      const acc = await live.account("business");
      const [res] = await live.call("/v1/sandbox/shipments/delhivery/1234567890111/advance", {
        key: acc.key,
        method: "POST",
      });
      expect(res.status).toBe(404);
      const [, doc] = await live.call("/openapi.json");
      expect(Object.keys(doc.paths).some((p) => p.includes("/sandbox/"))).toBe(false);
    } finally {
      await live.close();
    }
  });
});

const advance = (key: string, awb: string, headers: Record<string, string> = {}) =>
  ctx.call(`/v1/sandbox/shipments/delhivery/${awb}/advance`, { key, method: "POST", headers });

/** An account on a live-webhook plan with a live webhook at `path` listing `events`. */
async function hooked(path: string, events: string[]) {
  const acc = await ctx.account("business");
  const [res, body] = await ctx.call("/v1/webhooks", {
    key: acc.key,
    method: "POST",
    body: JSON.stringify({ url: rx.url(path), events, mode: "live" }),
  });
  expect(res.status).toBe(201);
  return { ...acc, webhookId: body.data.id as string };
}

const ALL = ["tracking.updated", "tracking.in_transit", "tracking.out_for_delivery", "tracking.delivered"];
const deliveriesTo = async (webhookId: string) =>
  Number((await ctx.tdb.sql`select count(*)::int as n from deliveries where webhook_id = ${webhookId}`)[0]!.n);
const followsOf = async (accountId: string, awb: string) =>
  Number(
    (
      await ctx.tdb.sql`select count(*)::int as n from follows f join shipments s on s.id = f.shipment_id
        where f.account_id = ${accountId} and s.tracking_number = ${awb}`
    )[0]!.n,
  );
const checkpointsOf = async (key: string, awb: string) => {
  const [res, body] = await ctx.call(`/v1/shipments/delhivery/${awb}`, { key });
  expect(res.status).toBe(200);
  return body.data.Checkpoints.length as number;
};

describe("who may advance", () => {
  test("a shipment the caller does not follow: 404 SHIPMENT_NOT_FOLLOWED, no follow made, nothing moved, no webhook of its follower", async () => {
    const owner = await hooked("/owner", ALL);
    const stranger = await ctx.account("business");
    const awb = "1234567890211";
    const [t] = await ctx.call(`/v1/track?courier=delhivery&tracking_number=${awb}`, { key: owner.key });
    expect(t.status).toBe(200);
    const before = await checkpointsOf(owner.key, awb);
    const [res, body] = await advance(stranger.key, awb);
    expect(res.status).toBe(404);
    expect(body.error.code).toBe("SHIPMENT_NOT_FOLLOWED");
    expect(await followsOf(stranger.id, awb)).toBe(0);
    expect(await deliveriesTo(owner.webhookId)).toBe(0);
    // The simulator did not move either: the owner's own advance is the next step, not the one after.
    const [own, ownBody] = await advance(owner.key, awb);
    expect(own.status).toBe(200);
    expect(ownBody.data.Checkpoints.length).toBe(before + 1);
    expect(await deliveriesTo(owner.webhookId)).toBe(1);
  });

  test("a shipment another account follows too: 409 SANDBOX_SHIPMENT_SHARED, nothing moved, no webhook of either", async () => {
    const a = await hooked("/shared-a", ALL);
    const b = await hooked("/shared-b", ALL);
    const awb = "1234567890221";
    for (const acc of [a, b])
      expect((await ctx.call(`/v1/track?courier=delhivery&tracking_number=${awb}`, { key: acc.key }))[0].status).toBe(
        200,
      );
    const before = await checkpointsOf(a.key, awb);
    const [res, body] = await advance(a.key, awb);
    expect(res.status).toBe(409);
    expect(body.error.code).toBe("SANDBOX_SHIPMENT_SHARED");
    expect(await deliveriesTo(a.webhookId)).toBe(0);
    expect(await deliveriesTo(b.webhookId)).toBe(0);
    // Once b unfollows, a advances it: one step, to a's webhook alone.
    expect((await ctx.call(`/v1/shipments/delhivery/${awb}`, { key: b.key, method: "DELETE" }))[0].status).toBe(204);
    const [ok, okBody] = await advance(a.key, awb);
    expect(ok.status).toBe(200);
    expect(okBody.data.Checkpoints.length).toBe(before + 1);
    expect(await deliveriesTo(a.webhookId)).toBe(1);
    expect(await deliveriesTo(b.webhookId)).toBe(0);
  });
});

describe("a follower who arrives between the check and the record", () => {
  test("the advance's events are refused in the record's transaction: 409, no event stored, no delivery", async () => {
    const a = await hooked("/race-a", ALL);
    const b = await hooked("/race-b", ALL);
    const awb = "1234567890261";
    for (const acc of [a, b]) await ctx.call(`/v1/track?courier=delhivery&tracking_number=${awb}`, { key: acc.key });
    const delhivery = courierBySlug("delhivery")!;
    // What advanceSandboxForAccount does after its check passed for `a`, with `b` following by then.
    expect(ctx.sim.advance!(awb)).toBe(true);
    const { snapshot } = await ctx.deps.backends.lookup(delhivery, awb);
    const stored = async () =>
      Number(
        (
          await ctx.tdb.sql`select count(*)::int as n from events e join shipments s on s.id = e.shipment_id
            where s.tracking_number = ${awb}`
        )[0]!.n,
      );
    const before = await stored();
    const record = recordFetch(ctx.tdb.db, delhivery, awb, snapshot, {
      nowMs: ctx.clock.now(),
      recheckIntervalSeconds: 3600,
      onEvents: soleFollowerSink(ctx.deps.onEvents, a.id, delhivery, awb),
    });
    await expect(record).rejects.toMatchObject({ code: "SANDBOX_SHIPMENT_SHARED" });
    expect(await stored()).toBe(before);
    expect(await deliveriesTo(a.webhookId)).toBe(0);
    expect(await deliveriesTo(b.webhookId)).toBe(0);
  });
});

describe("Idempotency-Key and the rate limit", () => {
  test("the same key twice advances once: the retry is the stored answer, replayed", async () => {
    const acc = await hooked("/idem", ALL);
    const awb = "1234567890231";
    await ctx.call(`/v1/track?courier=delhivery&tracking_number=${awb}`, { key: acc.key });
    const before = await checkpointsOf(acc.key, awb);
    const headers = { "idempotency-key": "advance-once" };
    const [r1, b1] = await advance(acc.key, awb, headers);
    const [r2, b2] = await advance(acc.key, awb, headers);
    expect([r1.status, r2.status]).toEqual([200, 200]);
    expect(r2.headers.get("idempotent-replayed")).toBe("true");
    expect(b2.data.Checkpoints).toEqual(b1.data.Checkpoints);
    expect(await checkpointsOf(acc.key, awb)).toBe(before + 1);
    expect(await deliveriesTo(acc.webhookId)).toBe(1);
  });

  test(`at most ${30} advances a minute per account: the next is 429 RATE_LIMITED with Retry-After; other accounts unaffected`, async () => {
    const acc = await ctx.account("business");
    const other = await ctx.account("business");
    const awb = "1234567890241";
    for (const k of [acc.key, other.key])
      await ctx.call(`/v1/track?courier=delhivery&tracking_number=${awb}`, { key: k });
    await ctx.call(`/v1/shipments/delhivery/${awb}`, { key: other.key, method: "DELETE" });
    const minute = 60_000;
    ctx.clock.set((Math.floor(ctx.clock.now() / minute) + 1) * minute + 15_000);
    for (let i = 0; i < 30; i++) expect((await advance(acc.key, awb))[0].status).toBe(200);
    const [res, body] = await advance(acc.key, awb);
    expect(res.status).toBe(429);
    expect(body.error.code).toBe("RATE_LIMITED");
    expect(res.headers.get("retry-after")).toBe("45");
    // Another account's advances are counted apart (it follows a number of its own).
    await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890251", { key: other.key });
    expect((await advance(other.key, "1234567890251"))[0].status).toBe(200);
    ctx.clock.advance(45_000);
    expect((await advance(acc.key, awb))[0].status).toBe(200);
  });
});

describe("a courier that revises its EDD", () => {
  test("…991: the first step moves the courier's EDD two days later, and tracking.eta_changed reaches the webhook", async () => {
    const acc = await hooked("/eta", ["tracking.eta_changed"]);
    const awb = "1234567890991";
    const [, t] = await ctx.call(`/v1/track?courier=delhivery&tracking_number=${awb}`, { key: acc.key });
    const promised = t.data.EstimatedDeliveryDate as string;
    expect(promised).not.toBe("");
    const [res, body] = await advance(acc.key, awb);
    expect(res.status).toBe(200);
    expect(body.data.ShipmentState).toBe("intransit");
    const revised = body.data.EstimatedDeliveryDate as string;
    const day = (spec: string) => Date.parse(`${spec} 00:00:00 UTC`);
    expect((day(revised) - day(promised)) / 86_400_000).toBe(2);
    await worker.runOnce();
    const got = rx.on("/eta");
    expect(got.length).toBe(1);
    const payload = JSON.parse(got[0]!.text);
    expect(payload.event).toBe("tracking.eta_changed");
    const iso = (spec: string) => new Date(day(spec)).toISOString().slice(0, 10);
    expect(payload.data.eta_change).toEqual({ previous: iso(promised), current: iso(revised) });
    // The next steps keep the revised date: no second move.
    await advance(acc.key, awb);
    await worker.runOnce();
    expect(rx.on("/eta").length).toBe(1);
  });

  test("the same number's neighbours keep their promise: …981 is digit 1 unrevised", async () => {
    const acc = await ctx.account("business");
    const [, t] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890981", { key: acc.key });
    const [, b] = await advance(acc.key, "1234567890981");
    expect(b.data.EstimatedDeliveryDate).toBe(t.data.EstimatedDeliveryDate);
  });
});
