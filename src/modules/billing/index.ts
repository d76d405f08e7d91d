/** Billing routes: `GET /billing/plans` and the Stripe webhook (docs/billing.md). */
import { Type as T } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { errorBody, errorResponses } from "../../lib/errors.ts";
import { jsonResponse } from "../../lib/json.ts";
import type { Logger } from "../../lib/log.ts";
import { syncRequestHook } from "../../http/elysia-quirks.ts";
import { schemaModels } from "../../http/models.ts";
import { PLANS } from "../../domain/plans.ts";
import { billingFor, type BillingDeps } from "./service.ts";
import { STRIPE_WEBHOOK_PATH } from "./stripe/webhook.ts";

const PlanSchema = T.Object(
  {
    id: T.Union([
      T.Literal("free"),
      T.Literal("starter"),
      T.Literal("pro"),
      T.Literal("growth"),
      T.Literal("business"),
    ]),
    name: T.String(),
    monthly_quota: T.Integer({ description: "GET /v1/track requests per calendar month (UTC)." }),
    rate_limit_per_minute: T.Integer(),
    live_webhooks: T.Boolean({ description: "Whether live webhooks are included." }),
    price_inr_per_month: T.Integer(),
  },
  { title: "Plan" },
);

/** The plan listing's success body, registered once as the `PlanList` model (its document component). */
const PlanListResponse = T.Object(
  { success: T.Literal(true), data: T.Object({ plans: T.Array(PlanSchema), count: T.Integer() }) },
  { title: "PlanList" },
);
const billingModels = schemaModels("billing.models", { PlanList: PlanListResponse });

function pathOf(url: string): string | undefined {
  try {
    return new URL(url).pathname;
  } catch {
    return undefined;
  }
}

/** The Stripe webhook's answer; never rejects (an early hook answer bypasses the app's error handler, so 500 here). */
async function answerStripe(
  webhook: (request: Request) => Promise<Response>,
  request: Request,
  rid: unknown,
  log: Logger,
): Promise<Response> {
  const res = await webhook(request).catch((error: unknown) => {
    log.error("stripe webhook failed", { request_id: rid, error: error as Error });
    return jsonResponse(
      500,
      errorBody("INTERNAL_ERROR", `Unexpected error; quote request id ${String(rid)} to support.`),
    );
  });
  if (rid) res.headers.set("x-request-id", String(rid));
  return res;
}

export function billingModule(deps: BillingDeps) {
  const body = { success: true as const, data: { plans: PLANS.map((p) => ({ ...p })), count: PLANS.length } };
  const webhook = billingFor(deps).stripeWebhook;
  const app = new Elysia({ prefix: "/billing" }).use(billingModels);
  // Only the webhook's own request gets a promise back; every other request passes synchronously.
  if (webhook)
    app.onRequest(
      syncRequestHook(function stripeDoor({ request, set }) {
        if (
          request.method !== "POST" ||
          !request.url.includes(STRIPE_WEBHOOK_PATH) ||
          pathOf(request.url) !== STRIPE_WEBHOOK_PATH
        )
          return;
        return answerStripe(webhook, request, set.headers["x-request-id"], deps.log);
      }),
    );
  return app.get("/plans", () => body, {
    response: { 200: "PlanList", ...errorResponses.common },
    detail: {
      operationId: "listPlans",
      summary: "List subscription plans",
      description: "Public; no API key needed.",
      tags: ["Billing"],
      security: [],
    },
  });
}
