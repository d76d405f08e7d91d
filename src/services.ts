/**
 * The per-process services: the caches, leases, counters and batchers that hold state between requests. Built once
 * by the composition root (main.ts, or a test helper) for one database pool, handed to routes and workers through
 * `AppDeps.services`, and stopped once at shutdown by {@link stopServices} (docs/architecture.md, "Services").
 */
import type { Db } from "./db/client.ts";
import type { Clock, Timers } from "./lib/clock.ts";
import { RecentCache } from "./lib/recent-cache.ts";
import { AuthCache } from "./modules/accounts/auth-cache.ts";
import { KeyUse } from "./modules/accounts/key-use.ts";
import { QuotaLeases } from "./modules/accounts/quota-lease.ts";
import { RateCounter } from "./modules/accounts/rate-counter.ts";
import { loadKeys } from "./modules/accounts/service.ts";
import { CourierBudgets } from "./modules/couriers/budget.ts";
import { TransitStatsCache } from "./modules/predictions/stats.ts";
import { createFetchRead, type FetchRead } from "./db/fetch-read.ts";
import { CallBuckets } from "./modules/courier-health/buckets.ts";
import { HealthCache } from "./modules/courier-health/cache.ts";

/** Finished shipments remembered per process for re-answering lookups (tracking/recent.ts). */
const RECENT_FETCHES_MAX = 10_000;

export interface Services {
  /** Monthly quota units leased in blocks (accounts/quota-lease.ts). */
  quotaLeases: QuotaLeases;
  /** Per-account per-minute request windows, written in batches (accounts/rate-counter.ts). */
  rateCounter: RateCounter;
  /** API key last-use stamps, written in batches (accounts/key-use.ts). */
  keyUse: KeyUse;
  /** API key → account, invalidated by NOTIFY (accounts/auth-cache.ts). */
  authCache: AuthCache;
  /** Slices of the shared courier call budgets (couriers/budget.ts). */
  courierBudgets: CourierBudgets;
  /** Terminal records fetched moments ago (tracking/recent.ts). */
  recentFetches: RecentCache;
  /** The transit statistics behind predictions and stall thresholds (predictions/stats.ts). */
  transitStats: TransitStatsCache;
  /** The prepared read of a fetch's fast path on this pool (following/store.ts); holds nothing to stop. */
  fetchRead: FetchRead;
  /** Courier calls counted per minute, added to PostgreSQL once a minute (courier-health/buckets.ts). */
  courierCalls: CallBuckets;
  /** Each courier's health state as last read (courier-health/cache.ts). */
  courierHealth: HealthCache;
}

/**
 * The services of one process on pool `db`. `timers` is what a courier budget waits with (default the runtime's;
 * tests pass a FakeClock).
 */
export function createServices(db: Db, clock: Clock, timers?: Timers): Services {
  return {
    quotaLeases: new QuotaLeases(db),
    rateCounter: new RateCounter(db),
    keyUse: new KeyUse(db),
    authCache: new AuthCache(db, loadKeys),
    courierBudgets: new CourierBudgets(db, clock, timers),
    recentFetches: new RecentCache(RECENT_FETCHES_MAX),
    transitStats: new TransitStatsCache(db, () => clock.now()),
    fetchRead: createFetchRead(db),
    courierCalls: new CallBuckets(db, clock),
    courierHealth: new HealthCache(db, clock),
  };
}

/**
 * Stops every service, after the last request and the last job (main.ts): unused quota units go back to their
 * accounts, pending request counts and key-use stamps are written, caches are dropped. Each step runs even when
 * an earlier one fails; `onError` hears about each failure (a stopping process logs and goes on).
 */
export async function stopServices(
  s: Services,
  onError: (step: string, err: unknown) => void = () => undefined,
): Promise<void> {
  const steps: [string, () => unknown][] = [
    ["quota blocks", () => s.quotaLeases.returnAll()],
    ["rate windows", () => s.rateCounter.stop()],
    ["key use", () => s.keyUse.stop()],
    ["key cache", () => s.authCache.stop()],
    ["courier budgets", () => s.courierBudgets.stop()],
    ["recent fetches", () => s.recentFetches.stop()],
    ["transit statistics", () => s.transitStats.stop()],
    ["courier call buckets", () => s.courierCalls.stop()],
    ["courier health", () => s.courierHealth.stop()],
  ];
  for (const [step, stop] of steps) {
    try {
      await stop();
    } catch (err) {
      onError(step, err);
    }
  }
}
