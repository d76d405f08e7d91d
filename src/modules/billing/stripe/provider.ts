/** The `stripe` billing provider (docs/billing.md#what-changes-the-plan). */
import { eq } from "drizzle-orm";
import type Stripe from "stripe";
import type { Db } from "../../../db/client.ts";
import { billingSubscriptions } from "../../../db/schema/index.ts";
import type { Logger } from "../../../lib/log.ts";
import { isPlanId, type PlanId } from "../../../domain/plans.ts";
import type { BillingProvider, BillingState, PlanChangeDecision, PlanChangeRequest } from "../provider.ts";
import type { StripeBillingConfig } from "./client.ts";
import { rank } from "./plans.ts";

const LIVE = new Set(["active", "trialing", "past_due", "incomplete"]);

export interface StripeProviderDeps {
  db: Db;
  log: Logger;
  cfg: StripeBillingConfig;
  stripe: Stripe;
  /** Where Checkout sends the customer back (`PUBLIC_BASE_URL`). */
  publicBaseUrl: string;
}

/** The Stripe provider. Stripe API failures answer `declined` with a retry hint, never throw. */
export function stripeBilling(d: StripeProviderDeps): BillingProvider {
  const priceOf = (p: PlanId) => (p === "free" ? undefined : d.cfg.prices[p]);
  return {
    kind: "stripe",
    label:
      "Payments by Stripe: an upgrade opens Stripe Checkout and applies once Stripe confirms the payment; a downgrade applies at the end of the paid period",
    offers: (p) => p === "free" || priceOf(p) !== undefined,
    async requestPlanChange(req) {
      try {
        return await change(d, req, priceOf(req.to));
      } catch (err) {
        d.log.warn("stripe request failed", {
          account_id: req.accountId,
          error: (err as Error).name,
          type: (err as { type?: string }).type,
        });
        return {
          status: "declined",
          reason: "the payment provider could not be reached; please try again in a minute",
        };
      }
    },
    async state(accountId): Promise<BillingState> {
      const [row] = await d.db
        .select()
        .from(billingSubscriptions)
        .where(eq(billingSubscriptions.accountId, accountId))
        .limit(1);
      if (!row?.pendingPlan || !row.pendingAt || !isPlanId(row.pendingPlan)) return {};
      return { scheduled: { plan: row.pendingPlan, at: row.pendingAt } };
    },
  };
}

async function change(
  d: StripeProviderDeps,
  req: PlanChangeRequest,
  price: string | undefined,
): Promise<PlanChangeDecision> {
  const [row] = await d.db
    .select()
    .from(billingSubscriptions)
    .where(eq(billingSubscriptions.accountId, req.accountId))
    .limit(1);
  const subId = row?.stripeSubscriptionId && LIVE.has(row.status) ? row.stripeSubscriptionId : undefined;
  if (req.to !== "free" && !price)
    return { status: "declined", reason: "this plan cannot be bought online; contact us" };
  if (!subId) {
    if (req.to === "free") return { status: "approved", reference: "no_subscription" };
    const meta = { account_id: req.accountId, plan: req.to };
    const session = await d.stripe.checkout.sessions.create({
      mode: "subscription",
      line_items: [{ price, quantity: 1 }],
      client_reference_id: req.accountId,
      ...(row?.stripeCustomerId ? { customer: row.stripeCustomerId } : { customer_email: req.email }),
      metadata: meta,
      subscription_data: { metadata: meta },
      success_url: `${d.publicBaseUrl}/dashboard/billing?done=checkout-complete`,
      cancel_url: `${d.publicBaseUrl}/dashboard/billing?done=checkout-cancelled`,
    });
    if (!session.url) return { status: "declined", reason: "the payment page could not be opened; please try again" };
    return { status: "redirect", url: session.url };
  }
  if (req.to === "free") {
    await d.stripe.subscriptions.update(subId, { cancel_at_period_end: true });
    return { status: "submitted", reference: subId };
  }
  const sub = await d.stripe.subscriptions.retrieve(subId);
  const item = sub.items.data[0];
  if (!item) return { status: "declined", reason: "the subscription has no item to change; contact us" };
  if (sub.cancel_at_period_end) await d.stripe.subscriptions.update(subId, { cancel_at_period_end: false });
  const up = rank(req.to) > rank(req.from);
  await d.stripe.subscriptions.update(
    subId,
    up
      ? {
          items: [{ id: item.id, price }],
          proration_behavior: "always_invoice",
          payment_behavior: "pending_if_incomplete",
        }
      : { items: [{ id: item.id, price }], proration_behavior: "none" },
  );
  return { status: "submitted", reference: subId };
}
