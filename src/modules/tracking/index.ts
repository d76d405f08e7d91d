/** `GET /v1/track` (spec: Endpoints; counts against the quota). */
import { Elysia } from "elysia";
import type { AppDeps } from "../../deps.ts";
import { errorResponses } from "../../lib/errors.ts";
import { authPlugin } from "../../http/auth.ts";
import { resolveCourierParam } from "../couriers/auto.ts";
import { TrackQuery, trackingModels } from "./model.ts";
import { trackForAccount } from "./service.ts";
import { trackAnswerJson } from "./view.ts";
import { prebuiltResponse } from "../../http/prebuilt.ts";
import { JSON_CONTENT_TYPE } from "../../lib/json.ts";

const e = errorResponses.errorResponse;

/** Error responses shared by the live and demo tracking routes. */
export const trackErrors = {
  400: e("Courier not available through the API, or not a valid number for this courier.", [
    "COURIER_NOT_SUPPORTED",
    "INVALID_TRACKING_NUMBER",
  ]),
  404: e("Unknown courier slug (may carry did_you_mean), or the courier has no record of the number.", [
    "COURIER_NOT_FOUND",
    "TRACKING_NOT_FOUND",
  ]),
  502: e("Temporary courier or service error; retry.", ["SERVICE_ERROR"]),
  503: e(
    "Temporarily unavailable, or too many lookups already queued for this courier to answer in time; retry after Retry-After seconds.",
    ["SERVICE_UNAVAILABLE", "COURIER_BUSY"],
  ),
  504: e("The courier backend did not answer in time; retry.", ["TIMEOUT"]),
};

export function trackingModule(deps: AppDeps) {
  return new Elysia({ prefix: "/v1" })
    .use(trackingModels)
    .use(authPlugin(deps))
    .get(
      "/track",
      async ({ auth, query, set }) => {
        // courier=auto: detected here, before the service (which takes a slug); docs/shipments.md.
        const slug = resolveCourierParam(query.courier, query.tracking_number);
        const res = await trackForAccount(deps, auth, slug, query.tracking_number);
        const answer = slug === query.courier ? res : { ...res, detected_courier: slug };
        return prebuiltResponse(set, trackAnswerJson(answer), JSON_CONTENT_TYPE);
      },
      {
        apiKey: true,
        query: TrackQuery,
        response: {
          200: "TrackResponse",
          402: e("Monthly quota used up (message links to the upgrade page), or the account needs attention.", [
            "QUOTA_EXCEEDED",
            "ACCOUNT_NEEDS_ATTENTION",
          ]),
          ...errorResponses.authed,
          ...errorResponses.common,
          // After `common`: its 503 lists SERVICE_UNAVAILABLE only.
          ...trackErrors,
          400: e(
            "Courier not available through the API, not a valid number for this courier, or (courier=auto) several couriers fit.",
            ["COURIER_NOT_SUPPORTED", "INVALID_TRACKING_NUMBER", "COURIER_AMBIGUOUS"],
          ),
        },
        detail: {
          operationId: "trackShipment",
          summary: "Track a shipment",
          tags: ["Tracking"],
          description:
            "Calls the courier's backend, normalises the state and checkpoints, and answers. A delivered, returned or cancelled shipment looked up again shortly after the service last fetched it (within 5 minutes by default) is answered from that fetch (`FetchTime` \"0.000\"; still counted). Couriers with asynchronous backends are polled internally: this can take 10 to 30 seconds. Counts against the monthly quota (only 200 answers count). A successful lookup makes your account follow the shipment: its changes reach your live webhooks. `courier=auto` detects the courier from the number's format and check digit: one fit is tracked (the answer names it in `detected_courier`), several answer 400 COURIER_AMBIGUOUS with `candidates`, none 400 INVALID_TRACKING_NUMBER.",
        },
      },
    );
}
