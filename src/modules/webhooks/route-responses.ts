/** Error responses and the tag the `/v1/webhooks…` routes share (index.ts, delivery-routes.ts). */
import { errorResponses } from "../../lib/errors.ts";

export const E = errorResponses.errorResponse;
export const notFound = { 404: E("No webhook with this id on this account.", ["WEBHOOK_NOT_FOUND"]) };
export const errs = { ...errorResponses.authed, ...errorResponses.common };
export const tags = ["Webhooks"];
