/**
 * Failures while re-checking: the record and its events commit together or
 * not at all; a courier failure changes nothing, emits nothing and backs off
 * (only that courier's shipments).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AppDeps } from "../../src/deps.ts";
import { loadConfig } from "../../src/configure.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { runRecheckBatch } from "../../src/modules/following/recheck.ts";
import { backoffMs, recheckAfterFailureMs as failureBackoffMs } from "../../src/domain/following.ts";
import { createFollowingMetrics } from "../../src/modules/metrics/following.ts";
import { createCourierBackends } from "../../src/modules/couriers/registry.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import {
  eventsOf,
  liveWebhook,
  outboxOf,
  pastInterval,
  seedMany,
  setDue,
  shipmentRow,
  track,
  unscheduleRows,
} from "./helpers.ts";

let ctx: TestContext;
let growth: { id: string; key: string };
beforeAll(async () => {
  ctx = await testContext({ SANDBOX_STEP_SECONDS: "60", RECHECK_INTERVAL_SECONDS: "60" });
  growth = await ctx.account("growth");
  await liveWebhook(ctx, growth.key);
});
afterAll(() => ctx.close());

/** The stored record's fields a re-check could touch. */
const snapshotOf = (r: NonNullable<Awaited<ReturnType<typeof shipmentRow>>>) => ({
  state: r.state,
  subStatus: r.subStatus,
  mostRecentStatus: r.mostRecentStatus,
  checkpoints: r.checkpoints,
  checkpointCount: r.checkpointCount,
  lastCheckedAt: r.lastCheckedAt,
  updatedAt: r.updatedAt,
  terminal: r.terminal,
});

describe("the transaction rule", () => {
  test("outbox insert fails → the shipment record did not change either; after the lease the change is emitted once", async () => {
    const n = "1234567890111";
    await track(ctx, growth.key, "delhivery", n);
    const before = (await shipmentRow(ctx, "delhivery", n))!;
    ctx.clock.advance(pastInterval(ctx));

    const stats = await runRecheckBatch(ctx.deps, {
      random: () => 0.5,
      leaseMs: 30_000,
      afterOutbox: async () => {
        throw new Error("outbox insert failed (test)");
      },
    });
    expect(stats).toMatchObject({ claimed: 1, changed: 0, skipped: 1 });
    expect(ctx.sim.calls("delhivery", n)).toBe(2);
    const after = (await shipmentRow(ctx, "delhivery", n))!;
    expect(snapshotOf(after)).toEqual(snapshotOf(before));
    expect(await eventsOf(ctx, before.id)).toEqual([]);
    expect(await outboxOf(ctx, before.id)).toEqual([]);
    // The claim stays until its lease runs out (nothing recorded it): not re-checked meanwhile.
    expect(after.leaseUntil).not.toBeNull();
    expect((await runRecheckBatch(ctx.deps, { random: () => 0.5 })).claimed).toBe(0);

    ctx.clock.advance(31_000);
    expect((await runRecheckBatch(ctx.deps, { random: () => 0.5 })).changed).toBe(1);
    expect(await eventsOf(ctx, before.id)).toEqual(["tracking.updated/in_transit"]);
    expect((await outboxOf(ctx, before.id)).map((d) => d.eventType)).toEqual(["tracking.updated"]);
    await unscheduleRows(ctx, [before.id]);
  }, 30_000);
});

describe("courier failures", () => {
  // A realistic interval so the back-off steps are visible (base 5 min, doubling, capped at the interval).
  const longDeps = (): AppDeps => ({ ...ctx.deps, config: { ...ctx.config, recheckIntervalSeconds: 28_800 } });

  test("backoffMs doubles from the base and stops at the cap, ± 10 %", () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 10, 50].map((f) => backoffMs(f, 300_000, 28_800_000, mid))).toEqual([
      300_000, 600_000, 1_200_000, 2_400_000, 28_800_000, 28_800_000,
    ]);
    expect(backoffMs(1, 300_000, 28_800_000, () => 0)).toBe(270_000);
    expect(backoffMs(1, 300_000, 28_800_000, () => 0.999999)).toBeCloseTo(330_000, -1);
  });

  test("digits 5 (timeout) and 6 (5xx): nothing changes, nothing is emitted, the next check backs off; other couriers go on", async () => {
    const failing = [
      ["delhivery", "7234567890125"],
      ["delhivery", "7234567890126"],
    ] as const;
    const healthy = ["bluedart", "7234567891"] as const;
    const ids = await seedMany(ctx, growth.id, [...failing, healthy]);
    const before = await Promise.all(failing.map(([c, n]) => shipmentRow(ctx, c, n)));

    let prevNext = 0;
    for (let attempt = 1; attempt <= 3; attempt++) {
      const now = ctx.clock.now();
      const stats = await runRecheckBatch(longDeps(), { random: () => 0.5 });
      expect(stats.failed).toBe(2);
      expect(stats.errors).toEqual({ delhivery: 2 });
      for (const [i, [c, n]] of failing.entries()) {
        const row = (await shipmentRow(ctx, c, n))!;
        expect(snapshotOf(row)).toEqual(snapshotOf(before[i]!));
        expect(row).toMatchObject({ recheckFailures: attempt, leaseUntil: null, leaseOwner: null });
        // 5 min, 10 min, 20 min after the failure.
        expect(row.nextCheckAt!.getTime() - now).toBe(300_000 * 2 ** (attempt - 1));
        expect(await eventsOf(ctx, ids[i]!)).toEqual([]);
        expect(await outboxOf(ctx, ids[i]!)).toEqual([]);
        prevNext = row.nextCheckAt!.getTime();
      }
      ctx.clock.set(prevNext);
    }
    // The healthy courier's shipment was re-checked on its first pass and is on the normal schedule.
    const ok = (await shipmentRow(ctx, ...healthy))!;
    expect(ok).toMatchObject({ state: "in_transit", recheckFailures: 0 });
    expect(await eventsOf(ctx, ids[2]!)).toEqual(["tracking.in_transit/in_transit"]);
    expect(ctx.sim.calls(...healthy)).toBe(1);
    await unscheduleRows(ctx, ids);
  }, 30_000);

  test("an unavailable backend (live mode, no credentials) is a failure: nothing changes, back-off", async () => {
    const n = "1234567890631";
    await track(ctx, growth.key, "delhivery", n);
    const before = (await shipmentRow(ctx, "delhivery", n))!;
    ctx.clock.advance(pastInterval(ctx));
    const live = loadConfig({ COURIER_MODE: "live" });
    const backends = createCourierBackends({ config: live, clock: ctx.clock, log: silentLogger });
    try {
      const stats = await runRecheckBatch({ ...ctx.deps, backends }, { random: () => 0.5 });
      expect(stats).toMatchObject({ claimed: 1, failed: 1, changed: 0 });
    } finally {
      await backends.close();
    }
    const after = (await shipmentRow(ctx, "delhivery", n))!;
    expect(snapshotOf(after)).toEqual(snapshotOf(before));
    expect(after.recheckFailures).toBe(1);
    expect(after.nextCheckAt!.getTime()).toBe(ctx.clock.now() + 60_000);
    expect(await eventsOf(ctx, before.id)).toEqual([]);
    // Back with a working backend: the next re-check succeeds and resets the count.
    ctx.clock.advance(60_000);
    await runRecheckBatch(ctx.deps, { random: () => 0.5 });
    expect((await shipmentRow(ctx, "delhivery", n))!.recheckFailures).toBe(0);
    expect(await eventsOf(ctx, before.id)).toEqual(["tracking.updated/in_transit"]);
  }, 30_000);

  test("failureBackoffMs: a retryable failure steps up from the base, one that is not waits the whole interval at once", () => {
    const mid = () => 0.5;
    expect([1, 2, 3].map((f) => failureBackoffMs(true, f, 300_000, 28_800_000, mid))).toEqual([
      300_000, 600_000, 1_200_000,
    ]);
    expect([1, 2, 3].map((f) => failureBackoffMs(false, f, 300_000, 28_800_000, mid))).toEqual([
      28_800_000, 28_800_000, 28_800_000,
    ]);
    expect(failureBackoffMs(false, 1, 300_000, 28_800_000, () => 0)).toBe(25_920_000);
    // An interval shorter than the base: both wait the base (the cap is never below it).
    expect(failureBackoffMs(false, 1, 300_000, 60_000, mid)).toBe(300_000);
  });

  test("non-retryable failures (auth: no credentials; not_found: digit 4) back off a whole interval at once and are counted apart; a 5xx steps from 5 min", async () => {
    const metrics = createFollowingMetrics();
    const [auth] = await seedMany(ctx, growth.id, [["bluedart", "8234567891"]]);
    const [notFound, backend] = await seedMany(ctx, growth.id, [
      ["delhivery", "8234567890124"],
      ["delhivery", "8234567890126"],
    ]);
    const live = loadConfig({ COURIER_MODE: "live" });
    const unavailable = createCourierBackends({ config: live, clock: ctx.clock, log: silentLogger });
    // Bluedart has no credentials in live mode (auth); delhivery goes to the simulator as before.
    const backends: AppDeps["backends"] = {
      ...ctx.deps.backends,
      lookup: (c, n) => (c.slug === "bluedart" ? unavailable.lookup(c, n) : ctx.deps.backends.lookup(c, n)),
    };
    const nextIn = async (id: string) =>
      (await ctx.tdb.sql`select due_at, failures from recheck_schedule where shipment_id = ${id}`)[0]!;
    try {
      for (let attempt = 1; attempt <= 2; attempt++) {
        const now = ctx.clock.now();
        const stats = await runRecheckBatch({ ...longDeps(), backends }, { random: () => 0.5, metrics });
        expect(stats).toMatchObject({ failed: 3, changed: 0 });
        for (const id of [auth!, notFound!]) {
          const r = await nextIn(id);
          expect(r.failures).toBe(attempt);
          expect(new Date(r.due_at).getTime() - now).toBe(28_800_000);
        }
        const b = await nextIn(backend!);
        expect(new Date(b.due_at).getTime() - now).toBe(300_000 * 2 ** (attempt - 1));
        // Everything due again for the next round.
        await setDue(ctx, [auth!, notFound!, backend!], ctx.clock.now());
      }
    } finally {
      await unavailable.close();
    }
    const text = await metrics.registry.metrics();
    expect(text).toContain('courier_tracking_courier_errors_total{courier="bluedart",kind="auth",retryable="false"} 2');
    expect(text).toContain(
      'courier_tracking_courier_errors_total{courier="delhivery",kind="not_found",retryable="false"} 2',
    );
    expect(text).toContain(
      'courier_tracking_courier_errors_total{courier="delhivery",kind="backend",retryable="true"} 2',
    );
    await unscheduleRows(ctx, [auth!, notFound!, backend!]);
  }, 30_000);
});
