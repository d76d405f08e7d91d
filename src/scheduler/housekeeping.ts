/**
 * Housekeeping: releases expired re-check leases and prunes what is past RETENTION_DAYS (default 30), each table
 * through the module that writes it, in bounded batches; safe on every replica at once. What and why:
 * docs/rechecks.md#housekeeping.
 */
import type { AppDeps } from "../deps.ts";
import { IDEMPOTENCY_TTL_MS, prune as pruneIdempotencyKeys } from "../http/idempotency.ts";
import { pruneRateCounters } from "../modules/accounts/prune.ts";
import { pruneAlerts } from "../modules/alerts/prune.ts";
import { pruneActions } from "../modules/actions/service.ts";
import { pruneSessions } from "../modules/dashboard/session.ts";
import { moveLegacySchedule, releaseExpiredLeases } from "../modules/following/claims.ts";
import { legacyLayout } from "../modules/following/layout.ts";
import { eventPartitions, pruneEvents } from "../modules/following/prune.ts";
import { deliveryPartitions, pruneDeliveries } from "../modules/webhooks/prune.ts";
import { pruneCourierHealth } from "../modules/courier-health/prune.ts";

export type HousekeepingDeps = Pick<AppDeps, "db" | "clock" | "config" | "log">;

export interface HousekeepingOptions {
  /** Rows per delete statement (default 5,000). */
  batchSize?: number;
  /** Statements per table per run (default 100). */
  maxBatches?: number;
}

/** Rows affected per step of one run. */
export interface HousekeepingResult {
  leasesReleased: number;
  /** Rows moved from `recheck_queue` to `recheck_schedule` once contracted (docs/rechecks.md, "Layout level 2"). */
  scheduleMoved: number;
  deliveries: number;
  attempts: number;
  events: number;
  rateWindows: number;
  demoHits: number;
  /** Dashboard sessions past their expiry. */
  sessions: number;
  /** Stored idempotent responses past their 24 h. */
  idempotencyKeys: number;
  /** Owner alerts sent, skipped or failed (modules/alerts/prune.ts). */
  alerts: number;
  /** Final NDR actions, with their encrypted consignee details (docs/ndr-actions.md, "Personal data"). */
  actions: number;
  /** Weekly history partitions created ahead / dropped whole past retention (src/db/partitions.ts). */
  partitionsCreated: string[];
  partitionsDropped: string[];
  /** Courier call buckets and ended incidents past 30 days (modules/courier-health/prune.ts). */
  courierHealth: { buckets: number; incidents: number };
  ms: number;
}

/**
 * One housekeeping run at `deps.clock.now()`; everything strictly older than
 * now − RETENTION_DAYS goes, nothing newer.
 * @throws whatever the database throws (the scheduler logs and tries again next run).
 */
export async function runHousekeeping(
  deps: HousekeepingDeps,
  opts: HousekeepingOptions = {},
): Promise<HousekeepingResult> {
  const started = performance.now();
  const batches = { batchSize: opts.batchSize ?? 5_000, maxBatches: opts.maxBatches ?? 100 };
  const nowMs = deps.clock.now();
  const cutoffMs = nowMs - deps.config.retentionDays * 86_400_000;

  const leasesReleased = await releaseExpiredLeases(deps.db, nowMs);
  // Once contracted, rows an older process wrote to `recheck_queue` go to `recheck_schedule` (docs/rechecks.md).
  const scheduleMoved = (await legacyLayout(deps.db)) ? 0 : await moveLegacySchedule(deps.db);
  // Outbox rows first: an event goes only once no outbox row refers to it.
  const dp = await deliveryPartitions(deps.db, nowMs, cutoffMs);
  const { deliveries, attempts } = await pruneDeliveries(deps.db, cutoffMs, batches);
  const ep = await eventPartitions(deps.db, nowMs, cutoffMs);
  const events = await pruneEvents(deps.db, cutoffMs, batches);
  const [partitionsCreated, partitionsDropped] = [
    [...dp.created, ...ep.created],
    [...dp.dropped, ...ep.dropped],
  ];
  const { rateWindows, demoHits } = await pruneRateCounters(deps.db, cutoffMs, batches);
  const sessions = await pruneSessions(deps.db, nowMs, batches);
  // Idempotency keys answer retries for 24 h (docs/idempotency.md), whatever RETENTION_DAYS says.
  const idempotencyKeys = await pruneIdempotencyKeys(deps.db, nowMs - IDEMPOTENCY_TTL_MS, batches.batchSize);
  const alerts = await pruneAlerts(deps.db, cutoffMs, nowMs, batches);
  const courierHealth = await pruneCourierHealth(deps.db, nowMs);
  const actions = await pruneActions(deps, cutoffMs);

  const result = {
    leasesReleased,
    scheduleMoved,
    deliveries,
    attempts,
    events,
    rateWindows,
    demoHits,
    sessions,
    idempotencyKeys,
    alerts,
    actions,
    partitionsCreated,
    partitionsDropped,
    courierHealth,
    ms: Math.round(performance.now() - started),
  };
  const touched =
    leasesReleased +
    scheduleMoved +
    deliveries +
    attempts +
    events +
    rateWindows +
    demoHits +
    sessions +
    idempotencyKeys +
    alerts +
    actions +
    partitionsCreated.length +
    partitionsDropped.length +
    courierHealth.buckets +
    courierHealth.incidents;
  if (leasesReleased > 0)
    deps.log.warn("expired re-check leases released (a process died mid re-check)", {
      component: "housekeeping",
      leases: leasesReleased,
    });
  deps.log[touched > 0 ? "info" : "debug"]("housekeeping run", {
    component: "housekeeping",
    retention_days: deps.config.retentionDays,
    ...result,
  });
  return result;
}
