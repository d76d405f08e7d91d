/**
 * Courier rate budgets shared by every process (src/modules/couriers/budget.ts; docs/capacity.md, "Courier rate
 * budgets"): two budget instances on two pools of one database stand for two replicas. With a fake clock the
 * bound `B + r × (T + SLICE_TTL)` is checked over a 60 s window exactly; through the registry, real lookups to the
 * loopback courier simulator from two backends stay under it in real time (an upper bound: a slow machine only
 * makes fewer calls). `BUDGET_WINDOW_SECONDS=60` runs the real-time window for 60 s (manual run).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseRateLimits } from "../../src/config/index.ts";
import { COURIER_BACKENDS } from "../../src/modules/couriers/catalogue.ts";
import { loadConfig } from "../../src/configure.ts";
import { connect, type Db } from "../../src/db/client.ts";
import { FakeClock, systemClock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { ADAPTERS } from "../../src/modules/couriers/adapters/index.ts";
import type { CourierAdapter } from "../../src/modules/couriers/adapters/types.ts";
import {
  budgetOf,
  CourierBudgets,
  DEFAULT_RATE_LIMITS,
  recheckCallsPerDay,
  SLICE_TTL_MS,
  type Budget,
  type CallPurpose,
} from "../../src/modules/couriers/budget.ts";
import { courierBySlug, type AdapterId } from "../../src/modules/couriers/catalogue.ts";
import { BudgetCoverage } from "../../src/modules/couriers/coverage.ts";
import { CourierBusyError } from "../../src/modules/couriers/lane.ts";
import { createCourierBackends } from "../../src/modules/couriers/registry.ts";
import { startSimulator } from "../../src/sandbox/server.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { eventually } from "../helpers/eventually.ts";

let t: TestDatabase;
let second: { db: Db; sql: { end(o?: { timeout?: number }): Promise<void> } };

beforeAll(async () => {
  t = await createTestDatabase({ max: 8 });
  second = connect(t.url, { max: 8 });
});
afterAll(async () => {
  await second.sql.end({ timeout: 5 });
  await t.drop();
});

/** A budget of `perSecond` and `perDay` on its own row `key` (each test its own row). */
const budget = (key: string, perSecond: number, perDay: number, reservePercent = 20): Budget => ({
  ...budgetOf("delhivery", false, {}, { delhivery: { perSecond, perDay } }, reservePercent)!,
  key,
});

/** Tries `n` takes for `purpose` on each replica without waiting; returns how many got a token. */
async function burst(replicas: CourierBudgets[], b: Budget, purpose: CallPurpose, n: number): Promise<number> {
  const tries = replicas.flatMap((r) => Array.from({ length: n }, () => r.tryTake(b, purpose)));
  return (await Promise.all(tries)).filter((w) => w === 0).length;
}

describe("shared token bucket (fake clock)", () => {
  test("two replicas at 10/s make at most B + r × (T + slice TTL) calls in any window, and use the rate", async () => {
    const clock = new FakeClock();
    const replicas = [new CourierBudgets(t.db, clock, clock), new CourierBudgets(second.db, clock, clock)];
    const b = budget("bound:test", 10, 0);
    const stepMs = 100;
    const grantsAt: number[] = [];
    for (let at = 0; at < 60_000; at += stepMs) {
      const got = await burst(replicas, b, "live", 2);
      for (let i = 0; i < got; i++) grantsAt.push(clock.now());
      clock.advance(stepMs);
    }
    // 60 s: at most 10 + 10 × (60 + 0.25) = 612.5; far below would mean the replicas starve each other.
    expect(grantsAt.length).toBeLessThanOrEqual(612);
    expect(grantsAt.length).toBeGreaterThanOrEqual(600);
    // Every 1 s window: at most 10 + 10 × 1.25.
    for (let i = 0; i < grantsAt.length; i++) {
      const inWindow = grantsAt.filter((x) => x >= grantsAt[i]! && x < grantsAt[i]! + 1000).length;
      expect(inWindow).toBeLessThanOrEqual(Math.floor(10 + 10 * (1 + SLICE_TTL_MS / 1000)));
    }
  });

  test("re-checks yield: they are paced to (1 − reserve) of the rate and leave the reserve to live lookups", async () => {
    const clock = new FakeClock();
    const replicas = [new CourierBudgets(t.db, clock, clock), new CourierBudgets(second.db, clock, clock)];
    const b = budget("reserve:test", 10, 0, 20);
    let rechecks = 0;
    let live = 0;
    for (let at = 0; at < 30_000; at += 100) {
      rechecks += await burst(replicas, b, "recheck", 3);
      // A live lookup every 200 ms (5/s, more than the 2/s reserve).
      if (at % 200 === 0) live += await burst(replicas.slice(0, 1), b, "live", 1);
      clock.advance(100);
    }
    // Re-checks alone: at most 8/s (+ one pace burst); live lookups get every token the re-checks leave.
    expect(rechecks).toBeLessThanOrEqual(8 * 30 + 8 + 2);
    expect(live).toBeGreaterThanOrEqual(2 * 30);
    expect(rechecks + live).toBeLessThanOrEqual(10 + 10 * 30.25);
  });

  test("the day's count: re-checks are paced to (1 − reserve) × perDay over the day, live lookups stop at perDay; a new UTC day starts again", async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 5, 0, 0, 0));
    const r = new CourierBudgets(t.db, clock, clock);
    const b = budget("day:test", 100, 50, 20);
    expect(recheckCallsPerDay(b)).toBe(40);
    let rechecks = 0;
    // 40 a day, spread: one every 36 minutes, never two at once.
    for (let i = 0; i < 40; i++, clock.advance(36 * 60_000)) {
      const got = await burst([r], b, "recheck", 3);
      expect(got).toBeLessThanOrEqual(1);
      rechecks += got;
    }
    expect(rechecks).toBeGreaterThanOrEqual(39);
    expect(rechecks).toBeLessThanOrEqual(40);
    clock.set(Date.UTC(2026, 10, 5, 23, 59, 0));
    const live = await burst([r], b, "live", 60);
    expect(live).toBe(50 - rechecks);
    // Refused until midnight UTC: the wait says so.
    expect(await r.tryTake(b, "live")).toBe(60_000);
    await expect(r.acquire(b, "live")).rejects.toBeInstanceOf(CourierBusyError);
    clock.set(Date.UTC(2026, 10, 6, 0, 0, 1));
    expect(await r.tryTake(b, "live")).toBe(0);
  });

  test("a live lookup waits for the next token (within its wait), a re-check's refusal carries Retry-After", async () => {
    const clock = new FakeClock();
    const r = new CourierBudgets(t.db, clock, clock);
    const b = budget("wait:test", 1, 0, 0);
    await r.acquire(b, "live");
    let done = false;
    const waiting = r.acquire(b, "live").then(() => (done = true));
    expect(await eventually(() => clock.pendingTimers() > 0)).toBe(true);
    expect(done).toBe(false);
    clock.advance(1_000);
    await waiting;
    expect(done).toBe(true);
    const refused = await r.acquire(b, "recheck", 0).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CourierBusyError);
    expect((refused as CourierBusyError).retryAfterSeconds).toBe(1);
    expect((refused as CourierBusyError).kind).toBe("rate_limited");
  });
});

describe("configuration and coverage", () => {
  test("COURIER_RATE_LIMITS: entries parse, unknown backends and zero rates are configuration errors", () => {
    expect(Object.keys(DEFAULT_RATE_LIMITS).sort()).toEqual([...COURIER_BACKENDS].sort());
    expect(Object.keys(ADAPTERS).sort()).toEqual([...COURIER_BACKENDS].sort());
    expect(parseRateLimits(["dhl:0.5:100", "track17:2:0"], COURIER_BACKENDS)).toEqual({
      dhl: { perSecond: 0.5, perDay: 100 },
      track17: { perSecond: 2, perDay: 0 },
    });
    expect(loadConfig({ COURIER_RATE_LIMITS: "dhl:0.5:100" }).courierRateLimits).toEqual(["dhl:0.5:100"]);
    expect(() => loadConfig({ COURIER_RATE_LIMITS: "nope:1:0" })).toThrow(/COURIER_RATE_LIMITS/);
    expect(() => loadConfig({ COURIER_RATE_LIMITS: "dhl:0:10" })).toThrow(/COURIER_RATE_LIMITS/);
    expect(() => loadConfig({ COURIER_RATE_LIMITS: "dhl:1" })).toThrow(/COURIER_RATE_LIMITS/);
  });

  test("published defaults apply to live backends only; the key is per credential and never holds it", () => {
    expect(budgetOf("dhl", false, {}, {}, 20)).toBeUndefined();
    const a = budgetOf("dhl", true, { DHL_API_KEY: "secret-one" }, {}, 20)!;
    const c = budgetOf("dhl", true, { DHL_API_KEY: "secret-two" }, {}, 20)!;
    expect(a.limit).toEqual({ perSecond: 0.2, perDay: 250 });
    expect(a.key).toMatch(/^dhl:[0-9a-f]{12}$/);
    expect(a.key).not.toBe(c.key);
    expect(a.key).not.toContain("secret");
  });

  test("coverage: a budget covers its followed shipments until they need more re-checks a day than it allows", async () => {
    const b = budget("cover:test", 10, 30_000, 20);
    const config = { recheckIntervalSeconds: 28_800 };
    // 24,000 re-checks a day allowed = 8,000 shipments at 3 a day.
    expect(recheckCallsPerDay(b)).toBe(24_000);
    expect(BudgetCoverage.viewOf(b, 8_000, config).covers_followed).toBe(true);
    expect(BudgetCoverage.viewOf(b, 8_001, config).covers_followed).toBe(false);
    expect(BudgetCoverage.viewOf(b, undefined, config)).toEqual({
      per_second: 10,
      per_day: 30_000,
      covers_followed: null,
    });
    const clock = new FakeClock();
    const cov = new BudgetCoverage(t.db, config, [b], silentLogger, clock);
    await cov.refresh();
    expect(cov.view(b)).toEqual({ per_second: 10, per_day: 30_000, covers_followed: true });
  });
});

describe("through the registry: two replicas, real lookups to the loopback courier simulator", () => {
  test("COURIER_RATE_LIMITS=delhivery:10:0 holds for both replicas together", async () => {
    const windowS = Number(process.env.BUDGET_WINDOW_SECONDS ?? 3);
    const config = loadConfig({
      COURIER_MODE: "sandbox",
      COURIER_RATE_LIMITS: "delhivery:10:0",
      COURIER_TIMEOUT_MS: "2000",
    });
    const sim = startSimulator({ clock: systemClock, stepSeconds: 3600, asyncSeconds: 1 });
    const callsAt: number[] = [];
    const counted = (a: CourierAdapter): CourierAdapter => ({
      ...a,
      track: (n, ctx) => (callsAt.push(performance.now()), a.track(n, ctx)),
    });
    const adapters = { ...ADAPTERS, delhivery: counted(ADAPTERS.delhivery) } as Record<AdapterId, CourierAdapter>;
    const replicas = [t.db, second.db].map((db) =>
      createCourierBackends({
        config,
        clock: systemClock,
        log: silentLogger,
        simulator: sim,
        adapters,
        db,
        budgets: new CourierBudgets(db, systemClock),
      }),
    );
    const delhivery = courierBySlug("delhivery")!;
    try {
      expect(replicas[0]!.budget(delhivery)).toMatchObject({ per_second: 10, per_day: null });
      const started = performance.now();
      const endAt = started + windowS * 1000;
      let n = 0;
      let refused = 0;
      // 8 lookers per replica, each looking up new numbers back to back until the window ends.
      const looker = async (i: number) => {
        while (performance.now() < endAt) {
          const awb = String(10_000_000_000 + n++ * 10 + 0);
          await replicas[i % 2]!.lookup(delhivery, awb, i % 4 === 0 ? "live" : "recheck").catch((e: unknown) => {
            if (e instanceof CourierBusyError) refused++;
            else throw e;
          });
        }
      };
      await Promise.all(Array.from({ length: 16 }, (_, i) => looker(i)));
      const spanS = (Math.max(...callsAt) - started) / 1000;
      const bound = 10 + 10 * (spanS + SLICE_TTL_MS / 1000);
      console.log(
        `budget: ${callsAt.length} calls in ${spanS.toFixed(2)} s from 2 replicas at 10/s (bound ${bound.toFixed(1)}), ${refused} refused`,
      );
      expect(callsAt.length).toBeLessThanOrEqual(Math.floor(bound));
      expect(callsAt.length).toBeGreaterThan(0);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
      await sim.stop();
    }
  }, 120_000);
});
