/** `GET /metrics`, only for `Bearer <METRICS_TOKEN>` (404 without one); counts only, no ids. */
import { timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";
import type { CoreDeps } from "../../core-deps.ts";
import { AppError } from "../../lib/errors.ts";
import { renderMetrics } from "./scrape.ts";

/** True when `header` is `Bearer <token>` (constant-time comparison). */
function bearerMatches(header: string | null, token: string): boolean {
  const given = Buffer.from(/^Bearer\s+(.+)$/i.exec(header?.trim() ?? "")?.[1] ?? "");
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}

export function metricsModule(deps: Pick<CoreDeps, "db" | "clock" | "log" | "config">) {
  const token = deps.config.metricsToken;
  return new Elysia({ detail: { hide: true } }).get(
    "/metrics",
    async ({ request }) => {
      if (!token) throw new AppError("NOT_FOUND", "No such endpoint. The API reference is at /docs.");
      if (!bearerMatches(request.headers.get("authorization"), token))
        throw new AppError(
          "INVALID_API_KEY",
          "Send the metrics token as Authorization: Bearer <METRICS_TOKEN>.",
          {},
          { "www-authenticate": 'Bearer realm="metrics"' },
        );
      return renderMetrics(deps);
    },
    { detail: { operationId: "metrics", hide: true } },
  );
}
