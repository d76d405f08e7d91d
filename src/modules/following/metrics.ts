/**
 * Counters of the following machinery (docs/rechecks.md, Metrics), in a prom-client
 * registry that `GET /metrics` renders in Prometheus text format.
 *
 * One registry per process ({@link followingMetrics}): the re-check runner
 * and the `/metrics` route built from the same process share it. Counters are
 * per process (Prometheus sums replicas); the due backlog is a gauge read
 * from the database on each scrape, so every replica reports the same
 * shared figure (aggregate it with `max`, not `sum`).
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Db } from "../../db/client.ts";
import { serviceRegistry } from "../metrics/registry.ts";

export interface FollowingMetrics {
  registry: Registry;
  /** Scheduled re-checks finished, by courier slug and outcome (`changed` | `unchanged` | `failed`). */
  rechecks: Counter<"courier" | "outcome">;
  /** Events written by scheduled re-checks, by event type (`tracking.delivered`, …). */
  events: Counter<"type">;
  /** Courier failures seen by re-checks, by courier slug and failure kind (`timeout`, `backend`, …). */
  courierErrors: Counter<"courier" | "kind">;
  /** Shipments whose next check is due now (set on scrape by {@link refreshBacklog}). */
  dueBacklog: Gauge;
  /** Wall time of one re-check drain (claim → courier calls → record), seconds. */
  drainSeconds: Histogram;
}

/** The following counters in `registry` (default a fresh one: tests and benchmarks may want their own). */
export function createFollowingMetrics(registry: Registry = new Registry()): FollowingMetrics {
  return {
    registry,
    rechecks: new Counter({ name: "courier_tracking_rechecks_total", help: "Scheduled shipment re-checks finished, by courier and outcome.", labelNames: ["courier", "outcome"], registers: [registry] }),
    events: new Counter({ name: "courier_tracking_events_emitted_total", help: "Shipment events written (by scheduled re-checks and by lookups), by event type.", labelNames: ["type"], registers: [registry] }),
    courierErrors: new Counter({ name: "courier_tracking_courier_errors_total", help: "Courier failures (scheduled re-checks and lookups), by courier and failure kind.", labelNames: ["courier", "kind"], registers: [registry] }),
    dueBacklog: new Gauge({ name: "courier_tracking_recheck_due_backlog", help: "Followed shipments whose next re-check is due now (shared across replicas).", registers: [registry] }),
    drainSeconds: new Histogram({
      name: "courier_tracking_recheck_drain_seconds",
      help: "Wall time of one re-check drain: claims, courier calls and records.",
      buckets: [0.05, 0.25, 1, 5, 15, 60, 300],
      registers: [registry],
    }),
  };
}

/** The process-wide counters used by the scheduler and `GET /metrics`, in the service registry. */
export const followingMetrics: FollowingMetrics = createFollowingMetrics(serviceRegistry);

/**
 * Number of shipments due at `nowMs` (ms since the epoch).
 * The predicate matches the partial index `shipments_due_idx` (next_check_at
 * is not null), so the count costs the backlog, not the table. Claimed rows
 * (a lease still running) are not counted.
 */
export async function countDue(db: Db, nowMs: number): Promise<number> {
  const now = new Date(nowMs).toISOString();
  const [r] = await db.$client`select count(*)::int as n from shipments where next_check_at <= ${now} and (lease_until is null or lease_until <= ${now})`;
  return (r?.n as number | undefined) ?? 0;
}

/** Sets the backlog gauge from the database (call right before rendering). */
export async function refreshBacklog(m: FollowingMetrics, db: Db, nowMs: number): Promise<void> {
  m.dueBacklog.set(await countDue(db, nowMs));
}
