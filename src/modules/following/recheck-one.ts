/** One scheduled re-check: the courier call, then `recordFetch` or `recordFailure` (spec "What the service does"). */
import type { AppDeps } from "../../deps.ts";
import type { Db } from "../../db/client.ts";
import type { Logger } from "../../lib/log.ts";
import { inSpan } from "../../lib/tracing.ts";
import { CourierError, type CourierFailure } from "../couriers/adapters/types.ts";
import { courierBySlug, type Courier } from "../couriers/catalogue.ts";
import { recordFetch, type RecordOptions } from "./store.ts";
import { recordFailure, unschedule } from "./claims.ts";
import { recheckAfterFailureMs } from "../../domain/following.ts";
import type { FollowingMetrics } from "./metrics.ts";
import type { ClaimedShipment } from "./chunk-walk.ts";

/** A claimed row as the runner holds it. */
export interface Held extends ClaimedShipment {
  /** Lease end, ms since the epoch (renewed in place while held). */
  leaseUntilMs: number;
}

/** What one drain did. */
export interface RecheckStats {
  claimed: number;
  changed: number;
  unchanged: number;
  failed: number;
  /** Claimed but not re-checked: lease lapsed while queued, given back at stop, or the record step failed. */
  skipped: number;
  unscheduled: number;
  events: Record<string, number>;
  errors: Record<string, number>;
  ms: number;
}

export const emptyStats = (): RecheckStats => ({
  claimed: 0,
  changed: 0,
  unchanged: 0,
  failed: 0,
  skipped: 0,
  unscheduled: 0,
  events: {},
  errors: {},
  ms: 0,
});

/** Everything a re-check needs; `stats` is the current drain's, replaced per drain. */
export interface RecheckContext {
  /** Without `services` (benchmarks), records carry no prediction. */
  deps: Pick<AppDeps, "clock" | "config" | "backends" | "onEvents"> & Partial<Pick<AppDeps, "services">>;
  db: Db;
  log: Logger;
  owner: string;
  metrics: FollowingMetrics;
  random: () => number;
  /** First back-off after a retryable failure, ms. */
  backoffBaseMs: number;
  /** RECHECK_INTERVAL_SECONDS in ms. */
  intervalMs: number;
  afterOutbox?: RecordOptions["afterOutbox"];
  fetchRead?: RecordOptions["fetchRead"];
  stats: RecheckStats;
}

/** Re-checks one claimed row; false when skipped (it waited past its lease). @throws when recording fails (the row comes due again). */
export function recheckShipment(ctx: RecheckContext, row: Held): Promise<boolean> {
  // One trace per re-check; its event's deliveries join it.
  return inSpan("recheck", { "courier.slug": row.courier }, () => recheck(ctx, row), { parent: null });
}

async function recheck(ctx: RecheckContext, row: Held): Promise<boolean> {
  const { deps, stats } = ctx;
  const courier = courierBySlug(row.courier);
  if (courier?.follow !== "scheduled") {
    // Lookup-only couriers are never scheduled (spec-map Decisions: Lookup-only couriers).
    await unschedule(ctx.db, row.id, ctx.owner);
    stats.unscheduled++;
    return true;
  }
  if (deps.clock.now() >= row.leaseUntilMs) {
    stats.skipped++;
    return false;
  }
  let snapshot: Awaited<ReturnType<typeof deps.backends.lookup>>["snapshot"];
  try {
    snapshot = (await deps.backends.lookup(courier, row.tracking_number, "recheck")).snapshot;
  } catch (err) {
    await recordCourierFailure(ctx, courier, row, err);
    return true;
  }
  const history = await deps.services?.transitStats.get();
  const res = await recordFetch(ctx.db, courier, row.tracking_number, snapshot, {
    predict: history && ((c, r) => history.predict(c, r)),
    nowMs: deps.clock.now(),
    recheckIntervalSeconds: deps.config.recheckIntervalSeconds,
    random: ctx.random,
    afterOutbox: ctx.afterOutbox,
    fetchRead: ctx.fetchRead,
    onEvents: deps.onEvents,
    inChunk: row.chunk != null,
  });
  ctx.metrics.rechecks.inc({ courier: courier.slug, outcome: res.event ? "changed" : "unchanged" });
  if (res.event) {
    ctx.metrics.events.inc({ type: res.event });
    stats.changed++;
    stats.events[res.event] = (stats.events[res.event] ?? 0) + 1;
  } else stats.unchanged++;
  return true;
}

/** Records a failed courier call: counted (by kind and retryable), logged, the next check backed off. */
async function recordCourierFailure(ctx: RecheckContext, courier: Courier, row: Held, err: unknown): Promise<void> {
  const { deps, stats } = ctx;
  // Anything the registry did not classify is an adapter bug: a retryable backend error.
  const kind: CourierFailure = err instanceof CourierError ? err.kind : "backend";
  const retryable = err instanceof CourierError ? err.retryable : true;
  const failures = row.recheck_failures + 1;
  const nextAt =
    deps.clock.now() + recheckAfterFailureMs(retryable, failures, ctx.backoffBaseMs, ctx.intervalMs, ctx.random);
  const mine = await recordFailure(ctx.db, row.id, ctx.owner, nextAt);
  ctx.metrics.courierErrors.inc({ courier: courier.slug, kind, retryable: String(retryable) });
  ctx.metrics.rechecks.inc({ courier: courier.slug, outcome: "failed" });
  stats.failed++;
  stats.errors[courier.slug] = (stats.errors[courier.slug] ?? 0) + 1;
  ctx.log.debug("re-check failed; backing off", {
    courier: courier.slug,
    shipment_id: row.id,
    kind,
    retryable,
    failures,
    next_in_s: Math.round((nextAt - deps.clock.now()) / 1000),
    lease_held: mine,
  });
}
