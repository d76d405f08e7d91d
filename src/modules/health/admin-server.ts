/** The internal port (`ADMIN_PORT`): plain HTTP probes and `/metrics`, never for the internet. */
import type { CoreDeps } from "../../core-deps.ts";
import { errorBody } from "../../lib/errors.ts";
import { newId } from "../../lib/ids.ts";
import { jsonResponse } from "../../lib/json.ts";
import { SERVICE_VERSION } from "../../lib/version.ts";
import { renderMetrics } from "../metrics/scrape.ts";
import { createReadiness, READINESS_MESSAGE } from "./service.ts";
import type { Lifecycle } from "./state.ts";
import { defined } from "../../lib/defined.ts";

export interface AdminServer {
  port: number;
  stop(): Promise<void>;
}

function json(status: number, body: unknown, extra: Record<string, string> = {}): Response {
  return jsonResponse(status, body, { "x-request-id": newId("req"), ...extra });
}

/** Starts the internal server. @throws when the port cannot be bound. */
export function startAdminServer(
  deps: Pick<CoreDeps, "db" | "clock" | "log">,
  opts: { host: string; port: number; lifecycle: Lifecycle },
): AdminServer {
  const readiness = createReadiness(deps.db.$client, opts.lifecycle);
  const server = Bun.serve({
    hostname: opts.host,
    port: opts.port,
    maxRequestBodySize: 1024,
    // Production error handling only: never Bun's development error page.
    development: false,
    async fetch(req) {
      let path: string;
      try {
        path = new URL(req.url, "http://admin").pathname;
      } catch {
        return json(400, errorBody("BAD_REQUEST", "Malformed request URL or Host header."));
      }
      if (req.method !== "GET" && req.method !== "HEAD")
        return json(404, errorBody("NOT_FOUND", "The internal port serves GET /healthz, /readyz and /metrics."));
      if (path === "/healthz") return json(200, { status: "ok", version: SERVICE_VERSION });
      if (path === "/readyz") {
        const r = await readiness();
        return r.ready
          ? json(200, { status: "ok" })
          : json(503, errorBody("SERVICE_UNAVAILABLE", READINESS_MESSAGE[r.reason]), { "retry-after": "5" });
      }
      if (path === "/metrics") return renderMetrics(deps);
      return json(404, errorBody("NOT_FOUND", "The internal port serves GET /healthz, /readyz and /metrics."));
    },
    error() {
      return json(500, errorBody("INTERNAL_ERROR", "Unexpected error on the internal port."));
    },
  });
  // A TCP listener (not a unix socket) always has a port.
  return { port: defined(server.port, "the internal port"), stop: () => server.stop(false) };
}
