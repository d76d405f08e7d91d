/**
 * Events and getting them again, with the real delivery worker and a real
 * HTTPS receiver on loopback: stable event ids on every retry, Standard
 * Webhooks headers verified by the `standardwebhooks` package on a freshly
 * rotated secret (next to the spec's X-Service-Signature), GET /v1/events,
 * redeliver and recover.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { Value } from "@sinclair/typebox/value";
import { and, eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { deliveries, events } from "../../src/db/schema/index.ts";
import { EventListResponse } from "../../src/modules/events/model.ts";
import { verifyServiceSignature } from "../../clients/typescript/index.ts";
import { createDeliveryWorker, type DeliveryWorker } from "../../src/modules/webhooks/delivery/worker.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { emit, shipment } from "../webhooks/fixtures.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";

let ctx: TestContext;
let rx: Receiver;
let worker: DeliveryWorker;
beforeAll(async () => {
  ctx = await testContext(await webhookEnv());
  // Standard Webhooks receivers reject timestamps more than 5 minutes from their own clock.
  ctx.clock.set(Date.now());
  rx = await startReceiver();
  worker = createDeliveryWorker(ctx.deps);
});
afterAll(async () => {
  await worker.stop();
  rx.stop();
  await ctx.close();
});

const json = (key: string, method: string, body?: unknown) => ({
  key,
  method,
  ...(body === undefined ? {} : { body: JSON.stringify(body) }),
});

/** A business account, a live webhook at a fresh path, a followed shipment. */
async function setup() {
  const acc = await ctx.account("business");
  const path = `/r-${acc.id}`;
  const [res, body] = await ctx.call(
    "/v1/webhooks",
    json(acc.key, "POST", { url: rx.url(path), events: ["tracking.in_transit", "tracking.delivered"], mode: "live" }),
  );
  if (res.status !== 201) throw new Error(JSON.stringify(body));
  const shp = await shipment(ctx.tdb.db, [acc.id]);
  return { acc, path, webhookId: body.data.id as string, secret: body.data.secret as string, shp };
}

/** Runs the worker through every retry (clock moved past each 1 s back-off). */
async function drain(rounds = 7) {
  for (let i = 0; i < rounds; i++) {
    await worker.runOnce();
    ctx.clock.advance(2000);
  }
}

describe("event identity and signatures", () => {
  test("every attempt carries the event id in X-Webhook-Event-Id and webhook-id; both signatures verify, standardwebhooks on a freshly rotated secret", async () => {
    const s = await setup();
    const [, rotated] = await ctx.call("/v1/webhooks/rotate-secret", json(s.acc.key, "POST"));
    const secret = rotated.data.secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    rx.route(s.path, (_req, _url, n) => new Response(n < 3 ? "busy" : "ok", { status: n < 3 ? 503 : 200 }));
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", new Date(ctx.clock.now()));
    const [ev] = await ctx.tdb.db.select().from(events).where(eq(events.shipmentId, s.shp));
    await drain(4);
    const got = rx.on(s.path);
    expect(got.length).toBe(3);
    const wh = new Webhook(secret);
    for (const [i, r] of got.entries()) {
      expect(r.headers["x-webhook-event-id"]).toBe(ev!.id);
      expect(r.headers["webhook-id"]).toBe(ev!.id);
      expect(r.headers["x-webhook-delivery"]).toBe(`${s.webhookId}-${i + 1}`);
      expect(r.headers["webhook-timestamp"]).toMatch(/^\d{10}$/);
      expect(r.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      // The independent verifier (replay window included) and the spec's own scheme, keyed as documented.
      expect(wh.verify(r.text, r.headers)).toEqual(r.json);
      expect(verifyServiceSignature(secret, r.raw, r.headers["x-service-signature"]!)).toBe(true);
      expect(r.headers["x-service-signature"]).toBe(
        `sha256=${createHmac("sha256", secret).update(r.raw).digest("hex")}`,
      );
    }
    // A wrong secret or a tampered body fails.
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 7).toString("base64")}`).verify(got[0]!.text, got[0]!.headers),
    ).toThrow();
    expect(() => wh.verify(got[0]!.text.replace("in_transit", "delivered"), got[0]!.headers)).toThrow();
  });

  test("a secret issued before standard base64 (base64url) keeps verifying with the spec scheme; webhook-signature is keyed with its decoded bytes", async () => {
    const { signBody, standardSignature, secretKeyBytes } = await import(
      "../../src/modules/webhooks/delivery/signing.ts"
    );
    const old = "whsec_3q2-7wEAAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRo";
    expect(secretKeyBytes(old).length).toBe(32);
    expect(signBody(old, "{}")).toBe(`sha256=${createHmac("sha256", old).update("{}").digest("hex")}`);
    const asStandard = `whsec_${secretKeyBytes(old).toString("base64")}`;
    const ts = Math.floor(Date.now() / 1000);
    const headers = {
      "webhook-id": "evt_x",
      "webhook-timestamp": String(ts),
      "webhook-signature": standardSignature(old, "evt_x", ts, "{}"),
    };
    expect(new Webhook(asStandard).verify("{}", headers)).toEqual({});
  });
});

describe("GET /v1/events", () => {
  test("the account's events with id, time and the payload a delivery carries; filters and cursor; other accounts see none", async () => {
    const s = await setup();
    const t0 = ctx.clock.now();
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", new Date(t0));
    ctx.clock.advance(1000);
    await emit(ctx.tdb.db, s.shp, "tracking.delivered", new Date(t0 + 1000));
    const [res, body] = await ctx.call("/v1/events", { key: s.acc.key });
    expect(res.status).toBe(200);
    expect(Value.Check(EventListResponse, body)).toBe(true);
    expect(body.data.events.map((e: { type: string }) => e.type)).toEqual([
      "tracking.delivered",
      "tracking.in_transit",
    ]);
    const e = body.data.events[1];
    expect(e.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(e.created_at).toBe(new Date(Math.floor(t0 / 1000) * 1000).toISOString().replace(".000Z", "Z"));
    expect(e.payload.event).toBe("tracking.in_transit");
    expect(e.payload.enqueued_at).toBe(e.created_at);
    expect(e.payload.data).toMatchObject({
      courier: "delhivery",
      tracking_number: e.tracking_number,
      status: "in_transit",
      enqueued_at: e.created_at,
    });

    // The payload is exactly the body the worker delivers for that event.
    await worker.runOnce();
    const delivered = rx.on(s.path).find((r) => r.headers["x-webhook-event-id"] === e.id)!;
    // The webhook's copy adds its own per-webhook `sequence`; the rest is the same payload.
    const { sequence, ...withoutSequence } = delivered.json;
    expect(sequence).toBe(1);
    expect(withoutSequence).toEqual(e.payload);

    const [, one] = await ctx.call("/v1/events?type=tracking.delivered", { key: s.acc.key });
    expect(one.data.events.map((x: { type: string }) => x.type)).toEqual(["tracking.delivered"]);
    const [, byNumber] = await ctx.call(`/v1/events?courier=delhivery&tracking_number=${e.tracking_number}&limit=1`, {
      key: s.acc.key,
    });
    expect(byNumber.data.count).toBe(1);
    const [, page2] = await ctx.call(`/v1/events?limit=1&cursor=${byNumber.data.next_cursor}`, { key: s.acc.key });
    expect(page2.data.events[0].id).toBe(e.id);
    const [, since] = await ctx.call(`/v1/events?since=${new Date(t0 + 500).toISOString()}`, { key: s.acc.key });
    expect(since.data.count).toBe(1);
    const other = await ctx.account("free");
    const [, none] = await ctx.call("/v1/events", { key: other.key });
    expect(none.data.count).toBe(0);
    // Older than 30 days: out of the window.
    ctx.clock.advance(31 * 86_400_000);
    const [, old] = await ctx.call("/v1/events", { key: s.acc.key });
    expect(old.data.count).toBe(0);
    ctx.clock.set(Date.now());
    expect((await ctx.call("/v1/events?type=tracking.lost", { key: s.acc.key }))[0].status).toBe(422);
  });
});

describe("redeliver and recover", () => {
  test("redeliver: a new delivery now with a fresh attempt sequence, the same event id, the freshest record; 404 for unknown or foreign ids", async () => {
    const s = await setup();
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", new Date(ctx.clock.now()));
    await worker.runOnce();
    const [first] = rx.on(s.path);
    const [, list] = await ctx.call(`/v1/webhooks/${s.webhookId}/deliveries`, { key: s.acc.key });
    const dlv = list.data.deliveries[0].id as string;
    const [res, body] = await ctx.call(
      `/v1/webhooks/${s.webhookId}/deliveries/${dlv}/redeliver`,
      json(s.acc.key, "POST"),
    );
    expect(res.status).toBe(202);
    expect(body.data.delivery_id).toMatch(/^dlv_/);
    expect(body.data.delivery_id).not.toBe(dlv);
    await worker.runOnce();
    const again = rx.on(s.path);
    expect(again.length).toBe(2);
    expect(again[1]!.headers["x-webhook-event-id"]).toBe(first!.headers["x-webhook-event-id"]!);
    expect(again[1]!.headers["x-webhook-delivery"]).toBe(`${s.webhookId}-1`);
    expect(again[1]!.json.enqueued_at).toBe(first!.json.enqueued_at);

    const other = await setup();
    for (const [path, code] of [
      [`/v1/webhooks/${s.webhookId}/deliveries/dlv_nope/redeliver`, "DELIVERY_NOT_FOUND"],
      [`/v1/webhooks/${other.webhookId}/deliveries/${dlv}/redeliver`, "DELIVERY_NOT_FOUND"],
      [`/v1/webhooks/wh_nope/deliveries/${dlv}/redeliver`, "WEBHOOK_NOT_FOUND"],
    ] as const) {
      const [r, b] = await ctx.call(path, json(path.includes(other.webhookId) ? other.acc.key : s.acc.key, "POST"));
      expect([r.status, b.error.code]).toEqual([404, code]);
    }
  });

  test("recover: a receiver that was down gets every abandoned delivery since `since` again, once per event; 422 beyond 30 days", async () => {
    const s = await setup();
    rx.route(s.path, () => new Response("down", { status: 500 }));
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", new Date(ctx.clock.now()));
    await emit(ctx.tdb.db, s.shp, "tracking.delivered", new Date(ctx.clock.now()));
    await drain();
    const rows = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.webhookId, s.webhookId));
    expect(rows.map((r) => r.state)).toEqual(["abandoned", "abandoned"]);
    const missed = rx.on(s.path).length;
    expect(missed).toBe(12);

    rx.route(s.path, () => new Response("ok"));
    const since = new Date(ctx.clock.now() - 3600_000).toISOString();
    const [res, body] = await ctx.call(`/v1/webhooks/${s.webhookId}/recover`, json(s.acc.key, "POST", { since }));
    expect([res.status, body.data]).toEqual([202, { queued: 2 }]);
    // Recovering again while those are pending queues nothing new.
    expect(
      (await ctx.call(`/v1/webhooks/${s.webhookId}/recover`, json(s.acc.key, "POST", { since })))[1].data.queued,
    ).toBe(0);
    await worker.runOnce();
    const recovered = rx.on(s.path).slice(missed);
    expect(recovered.map((r) => r.json.event).sort()).toEqual(["tracking.delivered", "tracking.in_transit"]);
    // The recovered deliveries verify with both schemes.
    for (const r of recovered) {
      expect(verifyServiceSignature(s.secret, r.raw, r.headers["x-service-signature"]!)).toBe(true);
      expect(new Webhook(s.secret).verify(r.text, r.headers)).toEqual(r.json);
    }
    const after = await ctx.tdb.db
      .select()
      .from(deliveries)
      .where(and(eq(deliveries.webhookId, s.webhookId), eq(deliveries.state, "delivered")));
    expect(after.length).toBe(2);

    const [tooOld] = await ctx.call(
      `/v1/webhooks/${s.webhookId}/recover`,
      json(s.acc.key, "POST", { since: new Date(ctx.clock.now() - 31 * 86_400_000).toISOString() }),
    );
    expect(tooOld.status).toBe(422);
    const [notDate] = await ctx.call(
      `/v1/webhooks/${s.webhookId}/recover`,
      json(s.acc.key, "POST", { since: "yesterday" }),
    );
    expect(notDate.status).toBe(422);
    const [nf] = await ctx.call("/v1/webhooks/wh_nope/recover", json(s.acc.key, "POST", { since }));
    expect(nf.status).toBe(404);
  });

  test("recover never queues a test fire: one failed test fire, then five recovers, queue nothing", async () => {
    const acc = await ctx.account("business");
    const path = `/t-${acc.id}`;
    rx.route(path, () => new Response("down", { status: 500 }));
    const [, created] = await ctx.call(
      "/v1/webhooks",
      json(acc.key, "POST", { url: rx.url(path), events: ["tracking.delivered"], mode: "test" }),
    );
    const webhookId = created.data.id as string;
    const [fired, fire] = await ctx.call(`/v1/webhooks/${webhookId}/test`, json(acc.key, "POST"));
    expect([fired.status, fire.data.delivered]).toEqual([200, false]);
    const since = new Date(ctx.clock.now() - 3600_000).toISOString();
    const queued: number[] = [];
    for (let i = 0; i < 5; i++) {
      const [res, body] = await ctx.call(`/v1/webhooks/${webhookId}/recover`, json(acc.key, "POST", { since }));
      expect(res.status).toBe(202);
      queued.push(body.data.queued);
      await drain(1);
    }
    expect(queued).toEqual([0, 0, 0, 0, 0]);
    const rows = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.webhookId, webhookId));
    expect(rows.length).toBe(1);
    expect(rx.on(path).length).toBe(1);
  });

  test("repeated recovers queue the newest delivery of each event once per call, never multiplied; audit deliveries stay out", async () => {
    const s = await setup();
    rx.route(s.path, () => new Response("down", { status: 500 }));
    await emit(ctx.tdb.db, s.shp, "tracking.in_transit", new Date(ctx.clock.now()));
    await emit(ctx.tdb.db, s.shp, "tracking.delivered", new Date(ctx.clock.now()));
    await drain();
    // Four failed test deliveries (event_id null) on the same live webhook.
    const [audited] = await ctx.call(`/v1/webhooks/${s.webhookId}/audit`, json(s.acc.key, "POST"));
    expect(audited.status).toBe(200);
    const since = new Date(ctx.clock.now() - 3600_000).toISOString();
    const queued: number[] = [];
    for (let i = 0; i < 5; i++) {
      const [, body] = await ctx.call(`/v1/webhooks/${s.webhookId}/recover`, json(s.acc.key, "POST", { since }));
      queued.push(body.data.queued);
      await drain(); // each recovered copy is abandoned again after its six attempts
    }
    expect(queued).toEqual([2, 2, 2, 2, 2]);
    const rows = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.webhookId, s.webhookId));
    expect(rows.filter((r) => r.eventId === null).length).toBe(4);
    expect(rows.filter((r) => r.eventId !== null).length).toBe(2 + 2 * 5);
    expect(rows.every((r) => r.state === "abandoned")).toBe(true);

    rx.route(s.path, () => new Response("ok"));
    const before = rx.on(s.path).length;
    const [, last] = await ctx.call(`/v1/webhooks/${s.webhookId}/recover`, json(s.acc.key, "POST", { since }));
    expect(last.data.queued).toBe(2);
    await worker.runOnce();
    const got = rx.on(s.path).slice(before);
    expect(got.map((r) => r.json.event).sort()).toEqual(["tracking.delivered", "tracking.in_transit"]);
    expect(new Set(got.map((r) => r.headers["x-webhook-event-id"])).size).toBe(2);
    // The newest delivery of each event is now delivered: nothing left to recover.
    const [, none] = await ctx.call(`/v1/webhooks/${s.webhookId}/recover`, json(s.acc.key, "POST", { since }));
    expect(none.data.queued).toBe(0);
  });
});
