/**
 * Issue 4 Tests and Failure: two schedulers on one database re-check every
 * due shipment exactly once per interval; a lease left by a killed process
 * is re-claimed after it expires, without a lost or duplicated event.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AppDeps } from "../../src/app.ts";
import { connect } from "../../src/db/client.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { releaseExpiredLeases } from "../../src/modules/following/housekeeping.ts";
import { claimDue, createRecheckRunner, recordFailure, runRecheckBatch } from "../../src/modules/following/recheck.ts";
import { createCourierBackends, type CourierBackends } from "../../src/modules/couriers/registry.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { eventsOf, liveWebhook, outboxOf, pastInterval, seedMany, shipmentRow, track } from "./helpers.ts";

let ctx: TestContext;
let growth: { id: string; key: string };
/** A second, independent runner: its own pool and its own courier backends (no shared coalescing). */
let other: { deps: AppDeps; close(): Promise<void> };
beforeAll(async () => {
  ctx = await testContext({ SANDBOX_STEP_SECONDS: "60", RECHECK_INTERVAL_SECONDS: "60" });
  growth = await ctx.account("growth");
  await liveWebhook(ctx, growth.key);
  const pool = connect(ctx.tdb.url, { max: 5 });
  const backends: CourierBackends = createCourierBackends({ config: ctx.config, clock: ctx.clock, log: silentLogger, sandboxBaseUrl: ctx.sim.baseUrlFor });
  other = { deps: { ...ctx.deps, db: pool.db, backends }, close: async () => (await backends.close(), await pool.sql.end({ timeout: 5 })) };
});
afterAll(async () => {
  await other.close();
  await ctx.close();
});

describe("claims shared through Postgres", () => {
  test("two runners draining concurrently: every due shipment re-checked exactly once per interval", async () => {
    const numbers: [string, string][] = [];
    for (let i = 0; i < 30; i++) numbers.push(["delhivery", `9${String(i).padStart(11, "0")}1`], ["bluedart", `5${String(i).padStart(8, "0")}1`]);
    await seedMany(ctx, growth.id, numbers);
    // Small claims and lanes so the two runners interleave many claim statements.
    const opts = { claimLimit: 7, perCourierConcurrency: 3, random: () => 0.5 };
    const a = createRecheckRunner(ctx.deps, { ...opts, owner: "runner-a" });
    const b = createRecheckRunner(other.deps, { ...opts, owner: "runner-b" });
    const share = { a: 0, b: 0 };
    for (let interval = 1; interval <= 3; interval++) {
      const [sa, sb] = await Promise.all([a.drain(), b.drain()]);
      share.a += sa.claimed;
      share.b += sb.claimed;
      expect(sa.claimed + sb.claimed).toBe(numbers.length);
      expect(sa.failed + sb.failed + sa.skipped + sb.skipped).toBe(0);
      for (const [c, n] of numbers) expect(`${c}:${n}:${ctx.sim.calls(c, n)}`).toBe(`${c}:${n}:${interval}`);
      // Nothing left due in this interval for either of them.
      const [again1, again2] = await Promise.all([a.drain(), b.drain()]);
      expect(again1.claimed + again2.claimed).toBe(0);
      ctx.clock.advance(60_000);
    }
    // Both did part of the work (they really ran side by side).
    expect(share.a).toBeGreaterThan(0);
    expect(share.b).toBeGreaterThan(0);
    // Every change was written once: one event per shipment per step (pending → in transit, then two updates).
    for (const [c, n] of numbers) {
      const row = (await shipmentRow(ctx, c, n))!;
      expect(await eventsOf(ctx, row.id)).toEqual(["tracking.in_transit/in_transit", "tracking.updated/in_transit", "tracking.updated/in_transit"]);
    }
    // Out of the way of the next tests.
    await ctx.tdb.sql`update shipments set next_check_at = null where tracking_number in ${ctx.tdb.sql(numbers.map(([, n]) => n))}`;
  }, 30_000);

  test("a lease left by a killed process is re-claimed after it expires; the change is emitted once", async () => {
    const n = "1234567890811";
    await track(ctx, growth.key, "delhivery", n);
    const row = (await shipmentRow(ctx, "delhivery", n))!;
    ctx.clock.advance(pastInterval(ctx));

    // The "killed" process claims the row (lease 30 s) and never calls the courier nor records anything.
    const claimed = await claimDue(ctx.tdb.db, ctx.clock.now(), 1000, 30_000, "killed-process");
    expect(claimed.map((r) => r.tracking_number)).toEqual([n]);
    const callsBefore = ctx.sim.calls("delhivery", n);

    // While the lease holds, no one else re-checks it, neither runner.
    expect((await runRecheckBatch(ctx.deps, { random: () => 0.5 })).claimed).toBe(0);
    expect((await runRecheckBatch(other.deps, { random: () => 0.5 })).claimed).toBe(0);
    expect(ctx.sim.calls("delhivery", n)).toBe(callsBefore);
    const leased = (await shipmentRow(ctx, "delhivery", n))!;
    expect(leased.leaseOwner).toBe("killed-process");

    // Lease expired: housekeeping counts and releases it, and the row is due again.
    ctx.clock.advance(31_000);
    expect(await releaseExpiredLeases(ctx.tdb.db, ctx.clock.now())).toBe(1);
    const stats = await runRecheckBatch(other.deps, { random: () => 0.5 });
    expect(stats.claimed).toBe(1);
    expect(ctx.sim.calls("delhivery", n)).toBe(callsBefore + 1);
    expect(await eventsOf(ctx, row.id)).toEqual(["tracking.updated/in_transit"]);
    expect((await outboxOf(ctx, row.id)).map((d) => d.eventType)).toEqual(["tracking.updated"]);

    // The dead claimer coming back cannot overwrite the new owner's result.
    expect(await recordFailure(ctx.tdb.db, row.id, "killed-process", leased.leaseUntil!.getTime(), ctx.clock.now())).toBe(false);
    // And a second re-check of the same courier answer (the zombie finishing its call) finds no change: no duplicate.
    await runRecheckBatch(ctx.deps, { random: () => 0.5 });
    expect(await eventsOf(ctx, row.id)).toEqual(["tracking.updated/in_transit"]);
    const after = (await shipmentRow(ctx, "delhivery", n))!;
    expect(after).toMatchObject({ leaseOwner: null, leaseUntil: null, recheckFailures: 0 });
  }, 30_000);

  test("stop() gives queued claims back at once instead of leaving them to their leases", async () => {
    // Digit 5: the courier never answers in time.
    await seedMany(ctx, growth.id, Array.from({ length: 10 }, (_, i) => ["delhivery", `8${String(i).padStart(11, "0")}5`] as const));
    const r = createRecheckRunner(ctx.deps, { perCourierConcurrency: 1, owner: "stopping" });
    const drained = r.drain();
    await Bun.sleep(200);
    await r.stop({ timeout: 5_000 });
    const stats = await drained;
    expect(stats.claimed).toBeGreaterThanOrEqual(10);
    const rows = await ctx.tdb.sql`select lease_owner, next_check_at <= ${new Date(ctx.clock.now()).toISOString()} as due from shipments where tracking_number like '8%5'`;
    // One was in flight (recorded as a failure, backed off); the queued ones are due again with no lease.
    expect(rows.filter((x) => x.lease_owner === "stopping")).toEqual([]);
    expect(rows.filter((x) => x.due).length).toBeGreaterThanOrEqual(9);
  }, 30_000);
});
