/**
 * `GET /v1/couriers` and `GET /v1/couriers/{slug}` (spec: Endpoints). Neither
 * counts against the quota; both need a key and count for the rate limit.
 */
import { Elysia } from "elysia";
import type { AppDeps } from "../../app.ts";
import { errorResponses } from "../../errors.ts";
import { authPlugin } from "../../http/auth.ts";
import { COURIERS } from "./catalogue.ts";
import { CourierListResponse, CourierResponse, SlugParams } from "./model.ts";
import { courierView, requireCourier } from "./service.ts";

export function couriersModule(deps: AppDeps) {
  const list = { success: true as const, data: { couriers: COURIERS.map(courierView), count: COURIERS.length } };
  return new Elysia({ prefix: "/v1/couriers", tags: ["Couriers"] })
    .use(authPlugin(deps))
    .get("/", () => list, {
      apiKey: true,
      response: { 200: CourierListResponse, ...errorResponses.authed, ...errorResponses.common },
      detail: { operationId: "listCouriers", summary: "List supported couriers", description: "The curated catalogue: every plan can track every courier listed. Does not count against the monthly quota." },
    })
    .get("/:slug", ({ params }) => ({ success: true as const, data: courierView(requireCourier(params.slug)) }), {
      apiKey: true,
      params: SlugParams,
      response: { 200: CourierResponse, 404: errorResponses.errorResponse("Unknown slug; may carry did_you_mean.", ["COURIER_NOT_FOUND"]), ...errorResponses.authed, ...errorResponses.common },
      detail: { operationId: "getCourier", summary: "Get one courier", description: "Does not count against the monthly quota. An unknown slug answers 404 COURIER_NOT_FOUND, with `did_you_mean` when one slug is clearly meant." },
    });
}
