/**
 * Transit statistics and the EDD backtest on a generated history with known per-lane distributions
 * (docs/predictions.md): the rebuild recovers the distributions, and the p10–p90 window holds 75–85 % of
 * held-out deliveries with a median error within a day.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runAdmin } from "../../src/cli/commands.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { rebuildIfDue } from "../../src/modules/predictions/daily.ts";
import { backtest } from "../../src/modules/predictions/backtest.ts";
import { rebuildTransitStats } from "../../src/modules/predictions/rebuild.ts";
import { loadStatsIndex, TransitStatsCache } from "../../src/modules/predictions/stats.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { generateDeliveries, insertDeliveries, laneModels } from "../helpers/history.ts";

const NOW = Date.parse("2026-11-20T12:00:00Z");
const lanes = laneModels(7);
let tdb: TestDatabase;
let first: Awaited<ReturnType<typeof rebuildTransitStats>>;

beforeAll(async () => {
  tdb = await createTestDatabase();
  await insertDeliveries(tdb.sql, generateDeliveries(lanes, 12_000, NOW - 3_600_000, 11));
  // Outside the 90-day window: must not count.
  await insertDeliveries(tdb.sql, generateDeliveries(lanes.slice(0, 1), 50, NOW - 100 * 86_400_000, 12, 5));
  first = await rebuildTransitStats(tdb.db, NOW, { batchSize: 2_000 });
});
afterAll(() => tdb?.drop());

describe("transit statistics", () => {
  test("the rebuild keeps every basis and recovers a lane's known median and p90 within 10 %", async () => {
    expect(first.deliveries).toBe(12_000);
    expect(first.batches).toBeGreaterThan(5);
    const rows = await tdb.sql<
      { basis: string; n: number }[]
    >`select basis, count(*)::int as n from transit_stats group by basis order by basis`;
    expect([...rows]).toEqual([
      { basis: "courier", n: 3 },
      { basis: "lane", n: lanes.length },
    ]);
    const lane = lanes[0]!;
    const [row] = await tdb.sql<{ p50: number; p90: number; n: number; gap_count: number }[]>`
      select transit_p50 as p50, transit_p90 as p90, transit_count as n, gap_count from transit_stats
      where courier = ${lane.courier} and basis = 'lane' and origin = ${lane.origin.toLowerCase()} and destination = ${lane.destination.toLowerCase()}`;
    expect(row!.n).toBeGreaterThan(30);
    expect(row!.p50 / 3600 / lane.medianH).toBeWithin(0.9, 1.1);
    expect(row!.p90 / 3600 / (lane.medianH * Math.exp(1.2816 * lane.sigma))).toBeWithin(0.88, 1.12);
    expect(row!.gap_count).toBeGreaterThan(row!.n);
  });

  test("a second rebuild replaces the rows instead of adding to them", async () => {
    await rebuildTransitStats(tdb.db, NOW);
    const [{ n }] = (await tdb.sql`select count(*)::int as n from transit_stats`) as unknown as [{ n: number }];
    expect(n).toBe(lanes.length + 3);
  });

  test("backtest on 10,000 held-out deliveries: p10–p90 holds 75–85 %, median error ≤ 1 day for lanes with ≥ 30 samples", async () => {
    const index = await loadStatsIndex(tdb.db);
    const figures = await backtest(
      index,
      generateDeliveries(lanes, 10_000, NOW, 99).map((d) => ({
        courier: d.lane.courier,
        originCity: d.lane.origin,
        destinationCity: d.lane.destination,
        checkpoints: d.checkpoints,
        deliveredOn: d.deliveredOn,
        courierEdd: d.courierEdd,
      })),
    );
    expect(figures.map((f) => f.courier)).toEqual(["bluedart", "delhivery", "dtdc"]);
    for (const f of figures) {
      expect(f.lanePredicted).toBe(f.deliveries);
      expect(f.laneInsideShare!).toBeWithin(0.75, 0.85);
      expect(f.laneMedianAbsErrorDays!).toBeLessThanOrEqual(1);
      expect(f.courierEdds).toBeGreaterThan(0);
    }
  });

  test("`bun run admin rebuild-transit-stats` rebuilds now; the daily job leaves statistics younger than 20 h", async () => {
    const later = NOW + 3_600_000;
    const out = await runAdmin(tdb.db, "rebuild-transit-stats", { positionals: [], flags: {} }, later);
    expect(out).toMatchObject({ deliveries: 12_000, rows: lanes.length + 3 });
    let nowMs = later + 19 * 3_600_000;
    const stats = new TransitStatsCache(tdb.db, () => nowMs);
    const deps = { db: tdb.db, clock: { now: () => nowMs }, log: silentLogger, stats };
    expect(await rebuildIfDue(deps)).toBeNull();
    nowMs = later + 21 * 3_600_000;
    expect((await rebuildIfDue(deps))?.deliveries).toBe(12_000);
    const [{ at }] = (await tdb.sql`select max(rebuilt_at) as at from transit_stats`) as unknown as [{ at: string }];
    expect(Date.parse(at)).toBe(nowMs);
  });
});
