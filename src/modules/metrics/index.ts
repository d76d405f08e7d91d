/**
 * `GET /metrics`: the process's counters in Prometheus text format
 * (prom-client; issue 4 item 6). Not part of the public API: hidden from the
 * OpenAPI document (`detail.hide`; the path is also excluded there). No API
 * key: scrapers reach it on the service port; it carries counts only, never
 * an account, key or tracking number.
 */
import { Elysia } from "elysia";
import type { AppDeps } from "../../app.ts";
import { followingMetrics, refreshBacklog, type FollowingMetrics } from "../following/metrics.ts";

export function metricsModule(deps: Pick<AppDeps, "db" | "clock" | "log">, metrics: FollowingMetrics = followingMetrics) {
  return new Elysia({ detail: { hide: true } }).get(
    "/metrics",
    async () => {
      // The due backlog is computed on scrape; a database outage must not hide the counters.
      await refreshBacklog(metrics, deps.db, deps.clock.now()).catch((e) => deps.log.warn("metrics: backlog query failed", { error: e as Error }));
      return new Response(await metrics.registry.metrics(), { headers: { "content-type": metrics.registry.contentType } });
    },
    { detail: { operationId: "metrics", hide: true } },
  );
}
