/** `GET /billing/plans`: the public plan listing (spec: Endpoints; CONTRACT 2 fixes the shape). */
import { Type as T } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { errorResponses } from "../../errors.ts";
import { PLANS } from "./plans.ts";

export const PlanSchema = T.Object(
  {
    id: T.Union([T.Literal("free"), T.Literal("starter"), T.Literal("pro"), T.Literal("growth"), T.Literal("business")]),
    name: T.String(),
    monthly_quota: T.Integer({ description: "GET /v1/track requests per calendar month (UTC)." }),
    rate_limit_per_minute: T.Integer(),
    live_webhooks: T.Boolean({ description: "Whether live webhooks are included." }),
    price_inr_per_month: T.Integer(),
  },
  { title: "Plan" },
);

export function billingModule() {
  const body = { success: true as const, data: { plans: PLANS.map((p) => ({ ...p })), count: PLANS.length } };
  return new Elysia({ prefix: "/billing" }).get("/plans", () => body, {
    response: { 200: T.Object({ success: T.Literal(true), data: T.Object({ plans: T.Array(PlanSchema), count: T.Integer() }) }), ...errorResponses.common },
    detail: { operationId: "listPlans", summary: "List subscription plans", description: "Public; no API key needed.", tags: ["Billing"], security: [] },
  });
}
