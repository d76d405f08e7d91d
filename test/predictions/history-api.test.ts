/**
 * Our own history on the API (docs/predictions.md): `PredictedDelivery` on a sandbox shipment once its lane has
 * history (tracking data, stored shipment, list); `tracking.eta_changed` to subscribed webhooks only; stalled
 * shipments marked once per stall by the scheduler's check, cleared by a new checkpoint (fake clock throughout).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { webhooks } from "../../src/db/schema/index.ts";
import type { TrackingSnapshot } from "../../src/domain/checkpoint.ts";
import { STALL_DEFAULT_S } from "../../src/domain/predictions.ts";
import { newId } from "../../src/lib/ids.ts";
import { courierBySlug } from "../../src/modules/couriers/catalogue.ts";
import { markStalled } from "../../src/modules/following/stalls.ts";
import { recordFetch } from "../../src/modules/following/store.ts";
import { rebuildTransitStats } from "../../src/modules/predictions/rebuild.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { checkpoint } from "../webhooks/fixtures.ts";
import { generateDeliveries, insertDeliveries } from "../helpers/history.ts";
import { Client } from "../dashboard/support.ts";
import { eventually } from "../helpers/eventually.ts";
import { createScheduler } from "../../src/scheduler/index.ts";
import { accounts, follows, shipments } from "../../src/db/schema/index.ts";
import { eq } from "drizzle-orm";
import { listShipments } from "../../src/modules/shipments/service.ts";

let ctx: TestContext;
beforeAll(async () => (ctx = await testContext()));
afterAll(() => ctx?.close());

const HOUR = 3_600_000;
const delhivery = courierBySlug("delhivery")!;

describe("PredictedDelivery", () => {
  test("absent without history; present on the tracking data, the stored shipment and the list once the lane has 30 deliveries", async () => {
    const a = await ctx.account("pro");
    const awb = "1234567890121"; // sandbox digit 1: picked up 70 h before first sight, in transit
    const track = () => ctx.call(`/v1/track?courier=delhivery&tracking_number=${awb}`, { key: a.key });
    const [r1, b1] = await track();
    expect(r1.status).toBe(200);
    expect(b1.data.ShipmentState).toBe("intransit");
    expect(b1.data).not.toHaveProperty("PredictedDelivery");
    const [row] = await ctx.tdb.sql<
      { origin_city: string; destination_city: string }[]
    >`select origin_city, destination_city from shipments where tracking_number = ${awb}`;
    const lane = {
      courier: "delhivery",
      origin: row!.origin_city,
      destination: row!.destination_city,
      medianH: 96,
      sigma: 0.3,
      meanGapH: 6,
    };
    await insertDeliveries(ctx.tdb.sql, generateDeliveries([lane], 29, ctx.clock.now(), 5));
    await rebuildTransitStats(ctx.tdb.db, ctx.clock.now());
    ctx.deps.services.transitStats.invalidate();
    expect((await track())[1].data).not.toHaveProperty("PredictedDelivery"); // 29 < 30

    await insertDeliveries(ctx.tdb.sql, generateDeliveries([lane], 31, ctx.clock.now(), 6));
    await rebuildTransitStats(ctx.tdb.db, ctx.clock.now());
    ctx.deps.services.transitStats.invalidate();
    const [, b2] = await track();
    const p = b2.data.PredictedDelivery;
    expect(p).toMatchObject({ basis: "lane", sample_size: 60 });
    // Picked up 70 h before first sight (the fake clock's now), median transit about 96 h: about a day from now.
    const pickup = ctx.clock.now() - 70 * HOUR;
    expect(p.date >= new Date(pickup + 80 * HOUR + 5.5 * HOUR).toISOString().slice(0, 10)).toBe(true);
    expect(p.date <= new Date(pickup + 112 * HOUR + 5.5 * HOUR).toISOString().slice(0, 10)).toBe(true);
    expect(p.earliest <= p.date && p.date <= p.latest).toBe(true);
    expect(b2.data.EstimatedDeliveryDate).not.toBe(""); // the courier's own estimate stays beside it

    const [, stored] = await ctx.call(`/v1/shipments/delhivery/${awb}`, { key: a.key });
    expect(stored.data.PredictedDelivery).toEqual(p);
    const [, list] = await ctx.call("/v1/shipments", { key: a.key });
    expect(list.data.shipments[0]).toMatchObject({ tracking_number: awb, stalled: false, predicted_delivery: p });
  });
});

/** An account on a live-webhook plan following a new shipment, with a live webhook listing `events`. */
async function follower(events: string[]) {
  const a = await ctx.account("growth");
  const id = newId("wh");
  await ctx.tdb.db
    .insert(webhooks)
    .values({ id, accountId: a.id, url: "https://hooks.example.com/x", events, mode: "live" });
  return { ...a, webhookId: id };
}

const snap = (cps: ReturnType<typeof checkpoint>[], edd: string | null): TrackingSnapshot => ({
  checkpoints: cps,
  originCity: "Mumbai",
  destinationCity: "Pune",
  podUrl: null,
  remark: null,
  estimatedDelivery: edd,
});

async function store(awb: string, s: TrackingSnapshot, followAccountId?: string) {
  return recordFetch(ctx.tdb.db, delhivery, awb, s, {
    nowMs: ctx.clock.now(),
    recheckIntervalSeconds: 3600,
    onEvents: ctx.deps.onEvents,
    followAccountId,
  });
}

const deliveriesOf = (awb: string) =>
  ctx.tdb.sql<{ webhook_id: string; event_type: string }[]>`
    select d.webhook_id, d.event_type from deliveries d join shipments s on s.id = d.shipment_id where s.tracking_number = ${awb} order by d.created_at, d.id`;

describe("tracking.eta_changed", () => {
  test("an EDD moved by a day fires it to the webhook that lists it, not to one with the other events; the same day fires nothing", async () => {
    const subscribed = await follower(["tracking.eta_changed"]);
    const others = await follower([
      "tracking.updated",
      "tracking.in_transit",
      "tracking.out_for_delivery",
      "tracking.delivered",
      "tracking.exception",
    ]);
    const awb = "5550000000011";
    const cps = [checkpoint("in_transit", "2026-11-03", "09:15", "Picked up")];
    await store(awb, snap(cps, "2026-11-06"), subscribed.id);
    await store(awb, snap(cps, "2026-11-06"), others.id);
    await store(awb, snap(cps, "2026-11-06"));
    expect([...(await deliveriesOf(awb))]).toEqual([]);
    const r = await store(awb, snap(cps, "2026-11-08"));
    expect(r.event).toBeNull(); // no state or checkpoint event: the EDD alone moved
    expect([...(await deliveriesOf(awb))]).toEqual([
      { webhook_id: subscribed.webhookId, event_type: "tracking.eta_changed" },
    ]);
    const [, ev] = await ctx.call("/v1/events?type=tracking.eta_changed", { key: subscribed.key });
    expect(ev.data.events).toHaveLength(1);
    expect(ev.data.events[0].payload.data).toMatchObject({
      tracking_number: awb,
      eta_change: { previous: "2026-11-06", current: "2026-11-08" },
      estimated_delivery_date: "08-Nov-2026",
      stalled: false,
    });
  });
});

describe("stalled shipments", () => {
  test("no scan past the threshold: flagged and one tracking.stalled; a new checkpoint clears it; the next stall fires again", async () => {
    const hooked = await follower(["tracking.stalled"]);
    const awb = "5550000000021";
    const t0 = ctx.clock.now();
    const at = (ms: number) => new Date(ms).toISOString();
    const cp = (ms: number, activity: string) => ({
      ...checkpoint("in_transit", at(ms).slice(0, 10), at(ms).slice(11, 16), activity),
      at: at(ms),
    });
    await store(awb, snap([cp(t0 - HOUR, "Picked up")], null), hooked.id);
    const check = () => markStalled(ctx.deps, () => STALL_DEFAULT_S, ctx.clock.now());
    const stalledNow = async () =>
      (await ctx.call(`/v1/shipments/delhivery/${awb}`, { key: hooked.key }))[1].data.Stalled === true;

    ctx.clock.set(t0 + 70 * HOUR); // 71 h since the scan: not yet (the earlier tests' shipments stall here)
    await check();
    expect(await stalledNow()).toBe(false);
    ctx.clock.set(t0 + 72 * HOUR); // 73 h
    expect((await check()).stalled).toBe(1);
    expect((await check()).stalled).toBe(0);
    ctx.clock.set(t0 + 80 * HOUR);
    expect((await check()).stalled).toBe(0);
    expect(await stalledNow()).toBe(true);
    expect([...(await deliveriesOf(awb))]).toEqual([{ webhook_id: hooked.webhookId, event_type: "tracking.stalled" }]);
    const list = async (q: string) =>
      (await ctx.call(`/v1/shipments?${q}`, { key: hooked.key }))[1].data.shipments.map(
        (s: { tracking_number: string }) => s.tracking_number,
      );
    expect(await list("stalled=true")).toEqual([awb]);
    expect(await list("stalled=false")).toEqual([]);

    await store(awb, snap([cp(t0 + 79 * HOUR, "Reached hub"), cp(t0 - HOUR, "Picked up")], null));
    expect(await stalledNow()).toBe(false);
    expect(await list("stalled=true")).toEqual([]);
    expect((await check()).stalled).toBe(0);
    ctx.clock.set(t0 + 79 * HOUR + 73 * HOUR);
    expect((await check()).stalled).toBe(1);
    expect((await deliveriesOf(awb)).filter((d) => d.event_type === "tracking.stalled")).toHaveLength(2);
  });
});

describe("the scheduler's stall check", () => {
  test("runs on its own schedule and marks a shipment past the default threshold by the fake clock", async () => {
    const hooked = await follower(["tracking.stalled"]);
    const awb = "5550000000031";
    const t = ctx.clock.now();
    await store(
      awb,
      snap(
        [{ ...checkpoint("in_transit", "2026-11-01", "00:00", "Picked up"), at: new Date(t - HOUR).toISOString() }],
        null,
      ),
      hooked.id,
    );
    ctx.clock.set(t + 80 * HOUR);
    const scheduler = createScheduler(ctx.deps, { jobs: ["stalls"], stallsPattern: "* * * * * *" });
    await scheduler.start();
    try {
      expect(
        await eventually(
          async () => (await deliveriesOf(awb)).some((d) => d.event_type === "tracking.stalled"),
          10_000,
        ),
      ).toBe(true);
    } finally {
      await scheduler.stop();
    }
  });
});

describe("dashboard shipments page", () => {
  test("a predicted delivery column, a stalled badge, a stalled filter, and the overview's stalled count", async () => {
    const user = new Client(ctx.app);
    await user.signUp("predict-dash@example.com");
    const [acc] = await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, "predict-dash@example.com"));
    // The sandbox shipment of the first test: its lane has 60 deliveries, so the list predicts it.
    const [onLane] = await ctx.tdb.db.select().from(shipments).where(eq(shipments.trackingNumber, "1234567890121"));
    await ctx.tdb.db.insert(follows).values({ accountId: acc!.id, shipmentId: onLane!.id });
    await ctx.tdb.db.update(shipments).set({ stalledAt: null }).where(eq(shipments.id, onLane!.id)); // the scheduler test may have marked it
    const id = newId("shp");
    await ctx.tdb.db.insert(shipments).values({
      id,
      courier: "delhivery",
      trackingNumber: "7770000000021",
      state: "in_transit",
      mostRecentStatus: "In transit",
      followers: 1,
      stalledAt: new Date(ctx.clock.now()),
    });
    await ctx.tdb.db.insert(follows).values({ accountId: acc!.id, shipmentId: id });
    const listed = await listShipments(
      ctx.tdb.db,
      acc!.id,
      { limit: 50 },
      {},
      await ctx.deps.services.transitStats.get(),
    );
    const date = listed.shipments.find((r) => r.tracking_number === "1234567890121")?.predicted_delivery?.date;
    expect(date).toMatch(/^\d{4}-\d{2}-\d{2}$/);

    const [res, page] = await user.get("/dashboard/shipments");
    expect(res.status).toBe(200);
    expect(page).toContain("Predicted delivery");
    expect(page).toContain(`<time datetime="${date}">${date}</time>`);
    expect(page.match(/>stalled<\/span>/g)).toHaveLength(1);
    expect(page).toContain('name="stalled"');
    const [, stalledOnly] = await user.get("/dashboard/shipments?stalled=true");
    expect(stalledOnly).toContain("7770000000021");
    expect(stalledOnly).not.toContain("1234567890121");
    const [, overview] = await user.get("/dashboard");
    expect(overview).toMatch(/href="\/dashboard\/shipments\?stalled=true"><strong>1<\/strong> stalled/);
  });
});
