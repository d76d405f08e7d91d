/**
 * `GET /demo/track`: public, no key, 5 requests per rolling hour per client IP
 * shared across replicas (CONTRACT 2); no quota, nobody starts following.
 */
import { Elysia } from "elysia";
import type { AppDeps } from "../../app.ts";
import { AppError, errorResponses } from "../../errors.ts";
import { clientIp } from "../../http/client-ip.ts";
import { hitDemo } from "../accounts/rate-limit.ts";
import { trackErrors } from "../tracking/index.ts";
import { DemoTrackResponse, TrackQuery } from "../tracking/model.ts";
import { trackDemo } from "../tracking/service.ts";

export const DEMO_LIMIT_PER_HOUR = 5;

export function demoModule(deps: AppDeps) {
  return new Elysia({ prefix: "/demo" }).get(
    "/track",
    async ({ query, request, server }) => {
      const ip = clientIp(server?.requestIP(request)?.address, request.headers.get("x-forwarded-for"), deps.config.trustProxy);
      const hit = await hitDemo(deps.db, ip, DEMO_LIMIT_PER_HOUR, deps.clock.now());
      if (!hit.allowed)
        throw new AppError("DEMO_RATE_LIMITED", `The demo allows ${DEMO_LIMIT_PER_HOUR} requests per hour per IP address; sign up for a free API key.`, {}, { "retry-after": String(hit.retryAfterSeconds) });
      return trackDemo(deps, query.courier, query.tracking_number);
    },
    {
      query: TrackQuery,
      response: { 200: DemoTrackResponse, ...trackErrors, 429: errorResponses.errorResponse("Demo limit reached; see Retry-After.", ["DEMO_RATE_LIMITED"]), ...errorResponses.common },
      detail: {
        operationId: "demoTrack",
        summary: "Track a shipment (public demo)",
        tags: ["Demo"],
        security: [],
        description: "No API key. 5 requests per hour per IP address. Same data as GET /v1/track, without `usage`; demo lookups do not follow the shipment.",
      },
    },
  );
}
