/**
 * Per-webhook sequence numbers (gap-free under concurrent fan-out, rollbacks included), the sequence on the wire,
 * and the delivery log joined to its events with its filters. Real PostgreSQL, a real loopback receiver.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { asc, eq, inArray } from "drizzle-orm";
import { deliveries, events } from "../../src/db/schema/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { fanOutEvent } from "../../src/modules/webhooks/delivery/outbox.ts";
import { createDeliveryWorker, type DeliveryWorker } from "../../src/modules/webhooks/delivery/worker.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { emit, shipment } from "./fixtures.ts";
import { startReceiver, webhookEnv, type Receiver } from "./receiver.ts";

let ctx: TestContext;
let rx: Receiver;
let worker: DeliveryWorker;
beforeAll(async () => {
  ctx = await testContext(await webhookEnv());
  rx = await startReceiver();
  worker = createDeliveryWorker({ ...ctx.deps });
});
afterAll(async () => {
  await worker.stop();
  rx.stop();
  await ctx.close();
});

async function liveHook(path: string) {
  const acc = await ctx.account("business");
  const [res, body] = await ctx.call("/v1/webhooks", {
    key: acc.key,
    method: "POST",
    body: JSON.stringify({ url: rx.url(path), events: ["tracking.in_transit", "tracking.delivered"], mode: "live" }),
  });
  if (res.status !== 201) throw new Error(JSON.stringify(body));
  return { acc, id: body.data.id as string };
}

const sequences = async (webhookId: string) =>
  (
    await ctx.tdb.db
      .select({ s: deliveries.sequence })
      .from(deliveries)
      .where(eq(deliveries.webhookId, webhookId))
      .orderBy(asc(deliveries.sequence))
  ).map((r) => r.s);

describe("sequence numbers", () => {
  test("1,000 events fanned out from parallel transactions (some rolled back) number each webhook 1..N, no gaps or duplicates", async () => {
    const a = await liveHook("/seq-a");
    const b = await liveHook("/seq-b");
    const shp = await shipment(ctx.tdb.db, [a.acc.id, b.acc.id]);
    const at = new Date(ctx.clock.now());
    const N = 1000;
    let rolledBack = 0;
    // 1,000 committed events and 50 rolled back, 25 transactions in flight at a time.
    const jobs = Array.from({ length: N + 50 }, (_, i) => i);
    const lanes = Array.from({ length: 25 }, async (_, lane) => {
      for (let i = lane; i < jobs.length; i += 25) {
        if (i % 21 === 20) {
          await ctx.tdb.db
            .transaction(async (tx) => {
              const eventId = newId("evt");
              await tx.insert(events).values({
                id: eventId,
                shipmentId: shp,
                type: "tracking.in_transit",
                status: "in_transit",
                enqueuedAt: at,
              });
              await fanOutEvent(tx, { eventId, shipmentId: shp, type: "tracking.in_transit", enqueuedAt: at });
              throw new Error("roll back");
            })
            .catch(() => rolledBack++);
        } else expect(await emit(ctx.tdb.db, shp, "tracking.in_transit", at)).toBe(2);
      }
    });
    await Promise.all(lanes);
    expect(rolledBack).toBe(50);
    const want = Array.from({ length: N }, (_, i) => i + 1);
    expect(await sequences(a.id)).toEqual(want);
    expect(await sequences(b.id)).toEqual(want);
    // Not for the worker of the next tests.
    await ctx.tdb.db.delete(deliveries).where(inArray(deliveries.webhookId, [a.id, b.id]));
  }, 120_000);

  test("payload `sequence` and X-Webhook-Sequence on the wire; the delivery log joins the event and filters", async () => {
    const w = await liveHook("/seq-wire");
    const shp = await shipment(ctx.tdb.db, [w.acc.id]);
    const t0 = Date.UTC(2026, 10, 5, 10, 0, 0);
    ctx.clock.set(t0);
    await emit(ctx.tdb.db, shp, "tracking.in_transit", new Date(t0));
    await emit(ctx.tdb.db, shp, "tracking.delivered", new Date(t0 + 60_000));
    await emit(ctx.tdb.db, shp, "tracking.in_transit", new Date(t0 + 120_000));
    ctx.clock.set(t0 + 120_000);
    rx.route(
      "/seq-wire",
      (req) => new Response(null, { status: req.headers.get("x-webhook-sequence") === "2" ? 500 : 200 }),
    );
    expect(await worker.runOnce()).toBe(3);
    const got = rx.on("/seq-wire");
    expect(got.map((r) => Number(r.headers["x-webhook-sequence"])).sort()).toEqual([1, 2, 3]);
    for (const r of got) expect(r.json.sequence).toBe(Number(r.headers["x-webhook-sequence"]));

    const list = async (q: string) => {
      const [res, body] = await ctx.call(`/v1/webhooks/${w.id}/deliveries${q}`, { key: w.acc.key });
      return { status: res.status, body };
    };
    const all = await list("");
    expect(all.status).toBe(200);
    const evts = await ctx.tdb.db
      .select()
      .from(events)
      .where(eq(events.shipmentId, shp))
      .orderBy(asc(events.enqueuedAt));
    expect(all.body.data.deliveries.map((d: any) => [d.sequence, d.event_id, d.event_type])).toEqual([
      [3, evts[2]!.id, "tracking.in_transit"],
      [2, evts[1]!.id, "tracking.delivered"],
      [1, evts[0]!.id, "tracking.in_transit"],
    ]);
    const seqOf = (r: { body: any }) => r.body.data.deliveries.map((d: any) => d.sequence);
    expect(seqOf(await list("?status=delivered"))).toEqual([3, 1]);
    expect(seqOf(await list("?status=pending"))).toEqual([2]);
    expect(seqOf(await list("?status=failed"))).toEqual([2]);
    expect(seqOf(await list("?status=abandoned"))).toEqual([]);
    expect(seqOf(await list("?event_type=tracking.in_transit"))).toEqual([3, 1]);
    expect(seqOf(await list("?since=2026-11-05T10:01:00Z"))).toEqual([3, 2]);
    expect(seqOf(await list("?until=2026-11-05T15:32:00%2B05:30"))).toEqual([2, 1]);
    expect(seqOf(await list("?after_sequence=1"))).toEqual([2, 3]);
    expect(seqOf(await list("?after_sequence=1&limit=1"))).toEqual([2]);
    expect(seqOf(await list("?after_sequence=0&status=delivered&event_type=tracking.in_transit"))).toEqual([1, 3]);

    for (const [q, name] of [
      ["?status=lost", "status"],
      ["?event_type=tracking.teleported", "event_type"],
      ["?since=yesterday", "since"],
      ["?until=2026-13-01T00:00:00Z", "until"],
      ["?after_sequence=-1", "after_sequence"],
      ["?after_sequence=1.5", "after_sequence"],
    ] as const) {
      const r = await list(q);
      expect(r.status).toBe(422);
      expect(r.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([["query", name]]);
    }
  });

  test("test fires carry no sequence", async () => {
    const acc = await ctx.account("free");
    const [, body] = await ctx.call("/v1/webhooks", {
      key: acc.key,
      method: "POST",
      body: JSON.stringify({ url: rx.url("/seq-test"), events: ["tracking.delivered"], mode: "test" }),
    });
    const [res] = await ctx.call(`/v1/webhooks/${body.data.id}/test`, { key: acc.key, method: "POST", body: "{}" });
    expect(res.status).toBe(200);
    const [got] = rx.on("/seq-test");
    expect(got!.headers["x-webhook-sequence"]).toBeUndefined();
    expect("sequence" in got!.json).toBe(false);
    const [, listed] = await ctx.call(`/v1/webhooks/${body.data.id}/deliveries`, { key: acc.key });
    expect(listed.data.deliveries[0]).toMatchObject({
      event_id: null,
      event_type: "tracking.delivered",
      sequence: null,
    });
  });
});
