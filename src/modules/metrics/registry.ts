/** The process's metrics in ONE prom-client registry; labels bounded (never an account, key or AWB). */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { SERVICE_VERSION } from "../../lib/version.ts";
import { DEACTIVATE_AFTER_FAILURES } from "../../domain/delivery.ts";

/** The process-wide registry (also holds the following metrics, src/modules/metrics/following.ts). */
export const serviceRegistry = new Registry();
collectDefaultMetrics({ register: serviceRegistry });

// The `build_info` convention (Prometheus' own, kube-state-metrics): a constant 1 whose label is the version.
new Gauge({
  name: "courier_tracking_build_info",
  help: "Always 1; `version` is the service's version (package.json, docs/releases.md).",
  labelNames: ["version"],
  registers: [serviceRegistry],
}).set({ version: SERVICE_VERSION }, 1);

const http = new Histogram({
  name: "courier_tracking_http_request_duration_seconds",
  help: "HTTP request duration on the public port, by route template, method and status.",
  labelNames: ["route", "method", "status"],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 35],
  registers: [serviceRegistry],
});

const ndrUnmapped = new Counter({
  name: "courier_tracking_ndr_unmapped_total",
  help: "New failed-attempt or exception checkpoints whose reason no table or keyword knew (ReasonCode other), by courier.",
  labelNames: ["courier"],
  registers: [serviceRegistry],
});

/** Counts one new checkpoint whose NDR reason was unmapped (docs/ndr.md), by courier slug. */
export function countUnmappedReason(courier: string): void {
  ndrUnmapped.inc({ courier });
}

const courierCalls = new Histogram({
  name: "courier_tracking_courier_call_duration_seconds",
  help: "Calls to courier backends (lookups and re-checks), by courier and outcome (ok or the failure kind), with their duration.",
  labelNames: ["courier", "outcome"],
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30],
  registers: [serviceRegistry],
});

/** Delivery outcomes counted since the last scrape: prom-client's `inc({..})` per delivery cost ~2 % of the worker. */
const pendingAttempts = new Map<string, { labels: { outcome: string; mode: string }; n: number }>();

// Registered, and fed by `collect`: nothing else holds it.
new Counter({
  name: "courier_tracking_webhook_delivery_attempts_total",
  help: "Webhook delivery outcomes: delivered, retried, abandoned, dropped (address check) or skipped (nothing sent), by mode.",
  labelNames: ["outcome", "mode"],
  registers: [serviceRegistry],
  collect() {
    for (const p of pendingAttempts.values())
      if (p.n > 0) {
        this.inc(p.labels, p.n);
        p.n = 0;
      }
  },
});

const deliveryLatency = new Histogram({
  name: "courier_tracking_webhook_delivery_latency_seconds",
  help: "From the event's commit (enqueued_at) to the receiver's 2xx, for delivered webhooks, by mode.",
  labelNames: ["mode"],
  buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60, 300, 1800, 7200, 86400],
  registers: [serviceRegistry],
});

// The two SLOs' own measures (docs/operations/slo.md): what the HTTP and delivery series cannot separate.
const trackOwnTime = new Histogram({
  name: "courier_tracking_track_own_duration_seconds",
  help: "GET /v1/track handlers: their time minus the courier call's, by result (ok, client_error, courier_error, server_error).",
  labelNames: ["result"],
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [serviceRegistry],
});

/** Outcome classes of a `/v1/track` lookup for {@link observeTrackOwnTime}: whose fault a failure was. */
export type TrackResult = "ok" | "client_error" | "courier_error" | "server_error";

/** Records one `/v1/track` handler's own time (seconds: its wall time minus the courier call's). */
export function observeTrackOwnTime(result: TrackResult, seconds: number): void {
  trackOwnTime.observe({ result }, Math.max(0, seconds));
}

const firstAttemptDelay = new Histogram({
  name: "courier_tracking_webhook_first_attempt_delay_seconds",
  help: "From the event's commit (enqueued_at) to the start of its delivery's first attempt, by mode.",
  labelNames: ["mode"],
  buckets: [1, 5, 15, 30, 60, 120, 300, 900, 3600],
  registers: [serviceRegistry],
});

/** Records the start of a delivery's first attempt; `enqueuedAt` as the claim read it, `nowMs` epoch ms. */
export function observeFirstAttempt(mode: string, enqueuedAt: string | Date, nowMs: number): void {
  const committed = new Date(enqueuedAt).getTime();
  if (Number.isFinite(committed)) firstAttemptDelay.observe({ mode }, Math.max(0, nowMs - committed) / 1000);
}

const deactivated = new Counter({
  name: "courier_tracking_webhooks_deactivated_total",
  help: `Live webhooks deactivated after ${DEACTIVATE_AFTER_FAILURES} consecutive failed deliveries (spec: Live webhook lifecycle).`,
  registers: [serviceRegistry],
});

const quotaLeaseFailures = new Counter({
  name: "courier_tracking_quota_lease_failures_total",
  help: "Quota statements the database did not complete: grant (a block of units for lookups; the request answers 503) or return (unused units given back; kept and sent again later).",
  labelNames: ["operation"],
  registers: [serviceRegistry],
});
// Both series exist from the start (0), so rate() and absence checks work before the first failure.
for (const operation of ["grant", "return"]) quotaLeaseFailures.labels({ operation }).inc(0);

/** Records one failed quota statement (`grant` or `return`). @returns `err`, for the caller to throw */
export function quotaLeaseFailure(operation: "grant" | "return", err: unknown): unknown {
  quotaLeaseFailures.labels({ operation }).inc();
  return err;
}

const budgetCoverage = new Gauge({
  name: "courier_tracking_courier_budget_coverage_ratio",
  help: "Re-check calls a courier backend's shared rate budget allows per day, divided by those its followed shipments need (below 1: re-checks run late; alert).",
  labelNames: ["backend"],
  registers: [serviceRegistry],
});

const budgetRefusals = new Counter({
  name: "courier_tracking_courier_budget_refusals_total",
  help: "Courier calls refused for want of a rate-budget token in time, by backend and purpose (live lookup or re-check).",
  labelNames: ["backend", "purpose"],
  registers: [serviceRegistry],
});

/** Sets a backend's budget coverage (src/modules/couriers/coverage.ts). */
export function setBudgetCoverage(backend: string, ratio: number): void {
  budgetCoverage.set({ backend }, ratio);
}

/** Counts one call refused by a backend's rate budget (src/modules/couriers/budget.ts). */
export function countBudgetRefusal(backend: string, purpose: string): void {
  budgetRefusals.inc({ backend, purpose });
}

/** Records one HTTP request. `route` is the route template (`/v1/webhooks/:id`), never the raw path. */
export function observeHttp(route: string, method: string, status: number, seconds: number): void {
  childOf(httpChildren, http, `${route} ${method} ${status}`, { route, method, status: String(status) }).observe(
    seconds,
  );
}
const httpChildren = new Map<string, ReturnType<typeof http.labels>>();

/** The histogram child for one label set, cached (at most 1,000): a child's observe costs half of observe(labels, v). */
function childOf<L extends string>(
  cache: Map<string, ReturnType<Histogram<L>["labels"]>>,
  metric: Histogram<L>,
  key: string,
  labels: Partial<Record<L, string>>,
) {
  let child = cache.get(key);
  if (!child) {
    child = metric.labels(labels);
    if (cache.size < 1_000) cache.set(key, child);
  }
  return child;
}

/** Starts timing one courier backend call; call the result with the outcome (`ok` or the failure kind). */
export function startCourierCall(courier: string): (outcome: string) => void {
  const end = courierCalls.startTimer({ courier });
  return (outcome) => void end({ outcome });
}

/** What the delivery worker knows after recording one outcome. */
export interface DeliveryObservation {
  mode: string;
  /** The event's commit time (text as PostgreSQL prints it, or a Date from the driver). */
  enqueued_at: string | Date;
}

const latencyChildren = new Map<string, ReturnType<typeof deliveryLatency.labels>>();

/** Records one delivery outcome (`pending` = retried) and a deactivation; `nowMs` is the worker's clock (epoch ms). */
export function observeDelivery(
  row: DeliveryObservation,
  outcome: { state: string },
  res: { deactivated: boolean },
  nowMs: number,
): void {
  const state = outcome.state === "pending" ? "retried" : outcome.state;
  const key = `${state}|${row.mode}`;
  const pending = pendingAttempts.get(key);
  if (pending) pending.n++;
  else pendingAttempts.set(key, { labels: { outcome: state, mode: row.mode }, n: 1 });
  if (state === "delivered") {
    const committed = new Date(row.enqueued_at).getTime();
    if (Number.isFinite(committed))
      childOf(latencyChildren, deliveryLatency, row.mode, { mode: row.mode }).observe(
        Math.max(0, nowMs - committed) / 1000,
      );
  }
  if (res.deactivated) deactivated.inc();
}

const alertEmails = new Counter({
  name: "courier_tracking_alert_emails_total",
  help: "Owner alert emails handled by the sender (docs/alerts.md): sent, skipped (kind turned off), retried (SMTP refused or unreachable) or failed (given up).",
  labelNames: ["outcome"],
  registers: [serviceRegistry],
});
for (const outcome of ["sent", "skipped", "retried", "failed"]) alertEmails.labels({ outcome }).inc(0);

/** Counts one alert the sender handled (src/modules/alerts/sender.ts). */
export function observeAlertEmail(outcome: "sent" | "skipped" | "retried" | "failed"): void {
  alertEmails.labels({ outcome }).inc();
}

const publicPage = new Counter({
  name: "courier_tracking_public_page_requests_total",
  help: "Public tracking page requests (docs/tracking-page.md), by kind (html, json, logo) and outcome (ok, not_modified, not_found, limited); per-account views are in the database.",
  labelNames: ["kind", "outcome"],
  registers: [serviceRegistry],
});

/** Counts one request of a public tracking link (src/modules/public-page/serve.ts). */
export function observePublicPage(
  kind: "html" | "json" | "logo",
  outcome: "ok" | "not_modified" | "not_found" | "limited",
): void {
  publicPage.labels({ kind, outcome }).inc();
}
