/** `GET /v1/couriers/{slug}/health` (docs/courier-health.md): no quota; key and rate limit like the other courier routes. */
import { Elysia } from "elysia";
import type { CoreDeps } from "../../core-deps.ts";
import { errorResponses } from "../../lib/errors.ts";
import { authPlugin } from "../../http/auth.ts";
import { SlugParams } from "../couriers/model.ts";
import { requireCourier } from "../couriers/service.ts";
import { healthModels } from "./model.ts";
import { courierHealth } from "./read.ts";

export function courierHealthModule(deps: Pick<CoreDeps, "db" | "clock" | "log">) {
  return new Elysia({ prefix: "/v1/couriers", tags: ["Couriers"] })
    .use(healthModels)
    .use(authPlugin(deps))
    .get(
      "/:slug/health",
      async ({ params }) => ({
        success: true as const,
        data: await courierHealth(deps.db, requireCourier(params.slug)),
      }),
      {
        apiKey: true,
        params: SlugParams,
        response: {
          200: "CourierHealthResponse",
          404: errorResponses.errorResponse("Unknown slug; may carry did_you_mean.", ["COURIER_NOT_FOUND"]),
          ...errorResponses.authed,
          ...errorResponses.common,
        },
        detail: {
          operationId: "getCourierHealth",
          summary: "Get a courier's API health",
          description:
            "The courier's state (operational, degraded, down, or unknown with too few calls) and the figures behind it, from this service's own calls to the courier (every account's lookups and re-checks; no tracking numbers): answered share, each failure kind's share, p50/p95 latency over 15 minutes, 1 hour and 24 hours, the 7-day p95 baseline, the age of the oldest due re-check and the open incident. Evaluated every minute; thresholds in docs/courier-health.md. Does not count against the monthly quota.",
        },
      },
    );
}
