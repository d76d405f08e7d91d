/** `GET /v1/couriers`, `/v1/couriers/{slug}` and `/v1/couriers/detect`: no quota, key and rate limit. */
import { Elysia } from "elysia";
import type { CoreDeps } from "../../core-deps.ts";
import { errorResponses } from "../../lib/errors.ts";
import { authPlugin } from "../../http/auth.ts";
import { COURIERS } from "./catalogue.ts";
import { detectCouriers } from "./detect.ts";
import { courierModels, DetectQuery, SlugParams } from "./model.ts";
import type { Courier } from "./catalogue.ts";
import type { CourierBackends } from "./registry.ts";
import { courierView, requireCourier, type HealthOf } from "./service.ts";
import { JSON_CONTENT_TYPE } from "../../lib/json.ts";
import { prebuiltHandler } from "../../http/prebuilt.ts";

export function couriersModule(
  deps: Pick<CoreDeps, "db" | "clock" | "log"> & { backends: CourierBackends; healthOf?: HealthOf },
) {
  const view = (c: Courier) => courierView(c, deps.backends, deps.healthOf);
  // The list changes only with a budget's coverage: serialised once per change, checked at most once a second.
  let listed = { views: "", body: "", atMs: -Infinity };
  const listBody = () => {
    const nowMs = performance.now();
    if (nowMs - listed.atMs < 1000) return listed.body;
    const couriers = COURIERS.map(view);
    const views = JSON.stringify(couriers);
    if (views !== listed.views)
      listed = {
        views,
        body: JSON.stringify({ success: true, data: { couriers, count: COURIERS.length } }),
        atMs: nowMs,
      };
    else listed.atMs = nowMs;
    return listed.body;
  };
  return (
    new Elysia({ prefix: "/v1/couriers", tags: ["Couriers"] })
      .use(courierModels)
      .use(authPlugin(deps))
      .get("", prebuiltHandler(listBody, JSON_CONTENT_TYPE), {
        apiKey: true,
        response: { 200: "CourierList", ...errorResponses.authed, ...errorResponses.common },
        detail: {
          operationId: "listCouriers",
          summary: "List supported couriers",
          description:
            "The curated catalogue: every plan can track every courier listed. Does not count against the monthly quota.",
        },
      })
      // Declared before `/:slug` so that "detect" is never read as a slug.
      .get(
        "/detect",
        ({ query }) => {
          const couriers = detectCouriers(query.tracking_number).map(view);
          return { success: true as const, data: { couriers, count: couriers.length } };
        },
        {
          apiKey: true,
          query: DetectQuery,
          response: { 200: "CourierDetection", ...errorResponses.authed, ...errorResponses.common },
          detail: {
            operationId: "detectCourier",
            summary: "Detect the courier of a tracking number",
            description:
              "Lists the catalogue couriers whose AWB format accepts the number, most specific format first (an empty list when none does). Formats overlap, so more than one courier may match. Does not count against the monthly quota.",
          },
        },
      )
      .get("/:slug", ({ params }) => ({ success: true as const, data: view(requireCourier(params.slug)) }), {
        apiKey: true,
        params: SlugParams,
        response: {
          200: "CourierResponse",
          404: errorResponses.errorResponse("Unknown slug; may carry did_you_mean.", ["COURIER_NOT_FOUND"]),
          ...errorResponses.authed,
          ...errorResponses.common,
        },
        detail: {
          operationId: "getCourier",
          summary: "Get one courier",
          description:
            "Does not count against the monthly quota. An unknown slug answers 404 COURIER_NOT_FOUND, with `did_you_mean` when one slug is clearly meant.",
        },
      })
  );
}
