/** Counters of the following machinery (docs/operations.md#metrics), one registry per process. */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { serviceRegistry } from "./registry.ts";

export interface FollowingMetrics {
  registry: Registry;
  /** Scheduled re-checks finished, by courier slug and outcome (`changed` | `unchanged` | `failed`). */
  rechecks: Counter<"courier" | "outcome">;
  /** Events written by scheduled re-checks, by event type (`tracking.delivered`, …). */
  events: Counter<"type">;
  /** Courier failures by courier slug, kind and `retryable` (`false` ones back off a whole re-check interval). */
  courierErrors: Counter<"courier" | "kind" | "retryable">;
  /** Shipments whose next check is due now (set on each scrape by src/modules/metrics/scrape.ts). */
  dueBacklog: Gauge;
  /** Wall time of one re-check drain (claim → courier calls → record), seconds. */
  drainSeconds: Histogram;
}

/** The following counters in `registry` (default a fresh one: tests and benchmarks may want their own). */
export function createFollowingMetrics(registry: Registry = new Registry()): FollowingMetrics {
  return {
    registry,
    rechecks: new Counter({
      name: "courier_tracking_rechecks_total",
      help: "Scheduled shipment re-checks finished, by courier and outcome.",
      labelNames: ["courier", "outcome"],
      registers: [registry],
    }),
    events: new Counter({
      name: "courier_tracking_events_emitted_total",
      help: "Shipment events written (by scheduled re-checks and by lookups), by event type.",
      labelNames: ["type"],
      registers: [registry],
    }),
    courierErrors: new Counter({
      name: "courier_tracking_courier_errors_total",
      help: "Courier failures (scheduled re-checks and lookups), by courier, failure kind and whether trying again soon can help.",
      labelNames: ["courier", "kind", "retryable"],
      registers: [registry],
    }),
    dueBacklog: new Gauge({
      name: "courier_tracking_recheck_due_backlog",
      help: "Followed shipments whose next re-check is due now (shared across replicas).",
      registers: [registry],
    }),
    drainSeconds: new Histogram({
      name: "courier_tracking_recheck_drain_seconds",
      help: "Wall time of one re-check drain: claims, courier calls and records.",
      buckets: [0.05, 0.25, 1, 5, 15, 60, 300],
      registers: [registry],
    }),
  };
}

/** The process-wide counters used by the scheduler, the tracking lookups and `GET /metrics`, in the service registry. */
export const followingMetrics: FollowingMetrics = createFollowingMetrics(serviceRegistry);
