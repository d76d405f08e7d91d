/**
 * `GET /v1/estimates`: a delivery date before any AWB exists, from our own delivered history. Key and rate limit
 * as every `/v1` route; no courier call and no quota unit; cacheable (ETag, 304) (docs/predictions.md, "Estimates").
 */
import { Elysia } from "elysia";
import type { AppDeps } from "../../deps.ts";
import { errorResponses } from "../../lib/errors.ts";
import { authPlugin } from "../../http/auth.ts";
import { prebuiltResponse } from "../../http/prebuilt.ts";
import { JSON_CONTENT_TYPE } from "../../lib/json.ts";
import { estimateModels, EstimateQuery } from "./model.ts";
import { estimatesBetween } from "./service.ts";

/** How long a client may reuse an answer, seconds: the statistics' reload period (predictions/stats.ts). */
const ESTIMATE_MAX_AGE_S = 300;

/** A strong validator of the exact body: its SHA-256, base64url, quoted (RFC 9110, 8.8.3). */
const etagOf = (body: string) => `"${new Bun.CryptoHasher("sha256").update(body).digest("base64url").slice(0, 27)}"`;

/** Whether an `If-None-Match` value names `etag` (`*`, or a list holding it, weak or strong: RFC 9110, 13.1.2). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(",").some((v) => {
    const tag = v.trim();
    return tag === "*" || tag === etag || tag === `W/${etag}`;
  });
}

export function estimatesModule(deps: Pick<AppDeps, "db" | "clock" | "log" | "services">) {
  return new Elysia({ prefix: "/v1/estimates", tags: ["Estimates"] })
    .use(estimateModels)
    .use(authPlugin(deps))
    .get(
      "",
      async ({ query, set, headers }) => {
        const index = await deps.services.transitStats.get();
        const data = estimatesBetween(index, query, deps.clock.now());
        const body = JSON.stringify({ success: true, data });
        const etag = etagOf(body);
        set.headers.etag = etag;
        set.headers["cache-control"] = `private, max-age=${ESTIMATE_MAX_AGE_S}`;
        set.headers.vary = "X-API-Key";
        if (matches(headers["if-none-match"], etag)) {
          const h = { ...(set.headers as Record<string, string>) };
          for (const k of Object.keys(set.headers)) delete set.headers[k];
          return new Response(null, { status: 304, headers: h });
        }
        return prebuiltResponse(set, body, JSON_CONTENT_TYPE);
      },
      {
        apiKey: true,
        query: EstimateQuery,
        response: {
          200: "EstimateList",
          404: errorResponses.errorResponse("Unknown courier slug; may carry did_you_mean.", ["COURIER_NOT_FOUND"]),
          ...errorResponses.authed,
          ...errorResponses.common,
        },
        detail: {
          operationId: "getEstimates",
          summary: "Estimate a delivery date before shipping",
          description:
            "The predicted delivery day and its p10–p90 window between two places (Indian PIN or city) for a ship date, per courier with at least 30 deliveries of history, ranked; from the same statistics as `PredictedDelivery`, counting Sundays and the holiday list as non-working days. No courier is called and no quota unit is counted. Answers carry `ETag` and `Cache-Control`; a matching `If-None-Match` answers 304. Not enough history: 200 with an empty list and `reason: not_enough_history`.",
        },
      },
    );
}
