/** `GET /demo/track`: no key, no quota, limited per client IP by src/domain/limits.ts. */
import { Elysia } from "elysia";
import type { AppDeps } from "../../deps.ts";
import { AppError, errorResponses } from "../../lib/errors.ts";
import { addressLimitKey, clientIp } from "../../http/client-ip.ts";
import type { SocketAddressOf } from "../../http/server.ts";
import { hitDemo, rateLimitHeaders } from "../accounts/rate-limit.ts";
import { trackErrors } from "../tracking/index.ts";
import { TrackQuery, trackingModels } from "../tracking/model.ts";
import { trackDemo } from "../tracking/service.ts";
import { DEMO_LIMIT_PER_HOUR } from "../../domain/limits.ts";

/** The 429 message: where the limit comes from and where to get a key (the dashboard's sign-up page). */
const demoLimitMessage = (publicBaseUrl: string) =>
  `The demo allows ${DEMO_LIMIT_PER_HOUR} requests per hour per IP address. Get a free API key at ${publicBaseUrl}/dashboard/sign-up and use /v1/track.`;

/** @param socketAddressOf the client's socket address of a request (http/server.ts); none without a socket */
export function demoModule(deps: AppDeps, socketAddressOf: SocketAddressOf = () => undefined) {
  return new Elysia({ prefix: "/demo" })
    .use(trackingModels)
    .get("/track", ({ query }) => trackDemo(deps, query.courier, query.tracking_number), {
      // Counted before validation (a transform), as the key is on /v1: over the limit is 429 whatever is sent.
      async transform({ request, set }) {
        const ip = clientIp(socketAddressOf(request), request.headers.get("x-forwarded-for"), deps.config.trustProxy);
        // Counted per normalised address, IPv6 per /64 (http/client-ip.ts): one client, one allowance.
        const hit = await hitDemo(deps.db, addressLimitKey(ip), DEMO_LIMIT_PER_HOUR, deps.clock.now());
        const headers = rateLimitHeaders(hit);
        Object.assign(set.headers, headers);
        if (!hit.allowed)
          throw new AppError(
            "DEMO_RATE_LIMITED",
            demoLimitMessage(deps.config.publicBaseUrl),
            {},
            { ...headers, "retry-after": String(hit.retryAfterSeconds) },
          );
      },
      query: TrackQuery,
      response: {
        200: "DemoTrackResponse",
        429: errorResponses.errorResponse("Demo limit reached; see Retry-After.", ["DEMO_RATE_LIMITED"]),
        ...errorResponses.common,
        ...trackErrors,
      },
      detail: {
        operationId: "demoTrack",
        summary: "Track a shipment (public demo)",
        tags: ["Demo"],
        security: [],
        description: `No API key. ${DEMO_LIMIT_PER_HOUR} requests per hour per IP address. Same data as GET /v1/track, without \`usage\`; demo lookups do not follow the shipment.`,
      },
    });
}
