/**
 * Following: a followed sandbox shipment produces the spec's events over
 * successive scheduled re-checks (short step, short interval), stops being
 * followed when terminal; lookup-only couriers are never scheduled.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runRecheckBatch } from "../../src/modules/following/recheck.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { eventsOf, liveWebhook, outboxOf, pastInterval, seedFollowed, shipmentRow, track } from "./helpers.ts";

let ctx: TestContext;
let growth: { id: string; key: string };
let webhookId: string;
beforeAll(async () => {
  ctx = await testContext({ SANDBOX_STEP_SECONDS: "60", RECHECK_INTERVAL_SECONDS: "60" });
  growth = await ctx.account("growth");
  webhookId = await liveWebhook(ctx, growth.key);
});
afterAll(() => ctx.close());

/** One scheduler tick: everything due now, jitter pinned to 0. */
const recheck = () => runRecheckBatch(ctx.deps, { random: () => 0.5 });

describe("scheduled re-checks through the simulator", () => {
  test("digit 1 tracked once: updated, updated, out_for_delivery, delivered in events and outbox; then no more re-checks", async () => {
    const n = "1234567890111";
    const first = await track(ctx, growth.key, "delhivery", n);
    expect(first.data.ShipmentState).toBe("intransit");
    const row = (await shipmentRow(ctx, "delhivery", n))!;
    expect(row.followers).toBe(1);
    // First sight is the lookup's own answer: no event for it.
    expect(await eventsOf(ctx, row.id)).toEqual([]);

    // Not due yet: nothing happens.
    expect((await recheck()).claimed).toBe(0);
    expect(ctx.sim.calls("delhivery", n)).toBe(1);

    // Each interval the simulator shows one more step (in transit at a hub, at the destination, out for delivery, delivered).
    for (let step = 1; step <= 4; step++) {
      ctx.clock.advance(pastInterval(ctx));
      const stats = await recheck();
      expect(stats.claimed).toBe(1);
      expect(stats.changed).toBe(1);
      expect(ctx.sim.calls("delhivery", n)).toBe(1 + step);
    }
    expect(await eventsOf(ctx, row.id)).toEqual([
      "tracking.updated/in_transit",
      "tracking.updated/in_transit",
      "tracking.out_for_delivery/out_for_delivery",
      "tracking.delivered/delivered",
    ]);
    const out = await outboxOf(ctx, row.id);
    expect(out.map((d) => [d.webhookId, d.eventType, d.state, d.mode])).toEqual([
      [webhookId, "tracking.updated", "pending", "live"],
      [webhookId, "tracking.updated", "pending", "live"],
      [webhookId, "tracking.out_for_delivery", "pending", "live"],
      [webhookId, "tracking.delivered", "pending", "live"],
    ]);
    // enqueued_at is fixed per event, to the second.
    for (const d of out) expect(d.enqueuedAt.getTime() % 1000).toBe(0);

    const done = (await shipmentRow(ctx, "delhivery", n))!;
    expect(done).toMatchObject({
      state: "delivered",
      terminal: true,
      nextCheckAt: null,
      leaseUntil: null,
      leaseOwner: null,
    });
    for (let i = 0; i < 3; i++) {
      ctx.clock.advance(pastInterval(ctx));
      expect((await recheck()).claimed).toBe(0);
    }
    expect(ctx.sim.calls("delhivery", n)).toBe(5);
  }, 30_000);

  test("a shipment first stored as pending yields tracking.in_transit when it moves", async () => {
    const n = "1234567890211";
    const id = await seedFollowed(ctx, growth.id, "delhivery", n);
    const stats = await recheck();
    expect(stats.claimed).toBe(1);
    expect(stats.events).toEqual({ "tracking.in_transit": 1 });
    expect(await eventsOf(ctx, id)).toEqual(["tracking.in_transit/in_transit"]);
    expect((await outboxOf(ctx, id)).map((d) => d.eventType)).toEqual(["tracking.in_transit"]);
  }, 30_000);

  test("digit 3: exception, then return to origin, then returned (terminal, tracking.exception with status returned)", async () => {
    const n = "1234567890313";
    const first = await track(ctx, growth.key, "delhivery", n);
    expect(first.data.ShipmentState).toBe("exception");
    const row = (await shipmentRow(ctx, "delhivery", n))!;
    for (let step = 1; step <= 2; step++) {
      ctx.clock.advance(pastInterval(ctx));
      await recheck();
      expect(ctx.sim.calls("delhivery", n)).toBe(1 + step);
    }
    // RTO initiated is still the exception state (more checkpoints → updated); returned is its own tracking.exception.
    expect(await eventsOf(ctx, row.id)).toEqual(["tracking.updated/exception", "tracking.exception/returned"]);
    expect((await shipmentRow(ctx, "delhivery", n))!).toMatchObject({
      state: "returned",
      terminal: true,
      nextCheckAt: null,
    });
    ctx.clock.advance(pastInterval(ctx));
    await recheck();
    expect(ctx.sim.calls("delhivery", n)).toBe(3);
  }, 30_000);

  test("a pending shipment that exceptions from the start: tracking.exception/exception first", async () => {
    const n = "1234567890323";
    const id = await seedFollowed(ctx, growth.id, "delhivery", n);
    await recheck();
    ctx.clock.advance(pastInterval(ctx));
    await recheck();
    ctx.clock.advance(pastInterval(ctx));
    await recheck();
    expect(await eventsOf(ctx, id)).toEqual([
      "tracking.exception/exception",
      "tracking.updated/exception",
      "tracking.exception/returned",
    ]);
  }, 30_000);

  test("lookup-only couriers (indiapost through the async aggregator, ekart): never scheduled, events only on lookups", async () => {
    for (const [courier, n] of [
      ["indiapost", "EE123456781IN"],
      ["ekart", "FMPC1234567891"],
    ] as const) {
      await track(ctx, growth.key, courier, n);
      const row = (await shipmentRow(ctx, courier, n))!;
      expect(row).toMatchObject({ followMode: "lookup", nextCheckAt: null, followers: 0 });
      const polls = ctx.sim.calls("track17", `gettrackinfo:${n}`);
      expect(polls).toBeGreaterThan(0);
      for (let i = 0; i < 3; i++) {
        ctx.clock.advance(pastInterval(ctx));
        await recheck();
      }
      expect(ctx.sim.calls("track17", `gettrackinfo:${n}`)).toBe(polls);
      expect(await eventsOf(ctx, row.id)).toEqual([]);
      // A lookup (the only way these are followed) compares with the record and writes the change's event.
      await track(ctx, growth.key, courier, n);
      expect((await eventsOf(ctx, row.id)).length).toBe(1);
      expect((await shipmentRow(ctx, courier, n))!.nextCheckAt).toBeNull();
    }
  }, 30_000);

  test("a lookup counts as a re-check: it pushes the next scheduled one out", async () => {
    const n = "1234567890711";
    await track(ctx, growth.key, "delhivery", n);
    const first = (await shipmentRow(ctx, "delhivery", n))!.nextCheckAt!.getTime();
    ctx.clock.advance(50_000);
    await track(ctx, growth.key, "delhivery", n);
    const pushed = (await shipmentRow(ctx, "delhivery", n))!.nextCheckAt!.getTime();
    expect(pushed).toBeGreaterThan(first);
    // Past the first schedule (≤ 66 s after the first lookup), before the pushed one (≥ 54 s after the second): not due.
    ctx.clock.advance(20_000);
    expect(ctx.clock.now()).toBeGreaterThan(first);
    expect(ctx.clock.now()).toBeLessThan(pushed);
    await recheck();
    expect(ctx.sim.calls("delhivery", n)).toBe(2);
  }, 30_000);
});
