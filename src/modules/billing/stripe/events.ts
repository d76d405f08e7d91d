/** Applies verified Stripe events to the account's plan, once each, in order (docs/billing.md). */
import { eq, sql } from "drizzle-orm";
import type Stripe from "stripe";
import type { Db, Tx } from "../../../db/client.ts";
import { accounts, billingSubscriptions, stripeEvents } from "../../../db/schema/index.ts";
import type { Logger } from "../../../lib/log.ts";
import { setPlan } from "../../accounts/service.ts";
import { isPlanId, type PlanId } from "../../../domain/plans.ts";
import type { StripeBillingConfig } from "./client.ts";
import { planOfPrice, rank } from "./plans.ts";

export type EventOutcome = "applied" | "duplicate" | "ignored";

/** Subscription statuses that keep the paid plan (past_due: Stripe is still retrying the payment). */
const ENTITLED = new Set(["active", "trialing", "past_due"]);

type SubscriptionRow = typeof billingSubscriptions.$inferSelect;

/**
 * Records and applies one verified event.
 * @returns `duplicate` when seen before; `ignored` for unhandled types or no account of ours
 * @throws database errors (the caller answers 5xx so Stripe retries)
 */
export async function applyStripeEvent(
  db: Db,
  cfg: StripeBillingConfig,
  log: Logger,
  event: Stripe.Event,
): Promise<EventOutcome> {
  return db.transaction(async (tx) => {
    const fresh = await tx
      .insert(stripeEvents)
      .values({ id: event.id, type: event.type })
      .onConflictDoNothing()
      .returning({ id: stripeEvents.id });
    if (fresh.length === 0) return "duplicate";
    const at = new Date(event.created * 1000);
    switch (event.type) {
      case "checkout.session.completed":
        return onCheckoutCompleted(tx, cfg, log, event.data.object, at);
      case "customer.subscription.created":
      case "customer.subscription.updated":
        return onSubscriptionChanged(tx, cfg, log, event.data.object, at);
      case "customer.subscription.deleted":
        return onSubscriptionDeleted(tx, log, event.data.object, at);
      default:
        return "ignored";
    }
  });
}

const idOf = (v: string | { id: string } | null | undefined): string | null =>
  typeof v === "string" ? v : (v?.id ?? null);

/** Locks the account's billing state for this transaction; undefined when the account does not exist. */
async function lockAccount(tx: Tx, accountId: string | null | undefined) {
  if (!accountId) return undefined;
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`billing:${accountId}`}, 0))`);
  const [acc] = await tx
    .select({ id: accounts.id, plan: accounts.plan })
    .from(accounts)
    .where(eq(accounts.id, accountId))
    .limit(1);
  if (!acc) return undefined;
  const [row] = await tx
    .select()
    .from(billingSubscriptions)
    .where(eq(billingSubscriptions.accountId, accountId))
    .limit(1);
  return { id: acc.id, plan: (isPlanId(acc.plan) ? acc.plan : "free") as PlanId, row };
}

async function saveRow(
  tx: Tx,
  accountId: string,
  values: Omit<typeof billingSubscriptions.$inferInsert, "accountId" | "updatedAt">,
) {
  const v = { ...values, updatedAt: new Date() };
  await tx
    .insert(billingSubscriptions)
    .values({ accountId, ...v })
    .onConflictDoUpdate({ target: billingSubscriptions.accountId, set: v });
}

/** Checkout finished and paid: the account gets the plan it bought (metadata set by our own Checkout Session). */
async function onCheckoutCompleted(
  tx: Tx,
  cfg: StripeBillingConfig,
  log: Logger,
  s: Stripe.Checkout.Session,
  at: Date,
): Promise<EventOutcome> {
  if (s.mode !== "subscription") return "ignored";
  const plan = s.metadata?.plan;
  if (!plan || !isPlanId(plan) || !cfg.prices[plan as keyof StripeBillingConfig["prices"]]) {
    log.warn("stripe checkout for an unknown plan ignored", { session: s.id, plan });
    return "ignored";
  }
  // Asynchronous payment methods complete the session unpaid; the subscription events carry the outcome.
  if (s.payment_status !== "paid" && s.payment_status !== "no_payment_required") return "ignored";
  const acc = await lockAccount(tx, s.client_reference_id);
  if (!acc) {
    log.warn("stripe checkout for an unknown account ignored", { session: s.id });
    return "ignored";
  }
  const ids = { stripeCustomerId: idOf(s.customer), stripeSubscriptionId: idOf(s.subscription) };
  if (acc.row && acc.row.stateAt > at) {
    // A newer subscription event already set the state; only link the ids.
    await saveRow(tx, acc.id, { ...acc.row, ...ids });
    return "applied";
  }
  await saveRow(tx, acc.id, { ...ids, status: "active", plan, pendingPlan: null, pendingAt: null, stateAt: at });
  if (acc.plan !== plan) await setPlan(tx, acc.id, plan);
  log.info("plan changed by stripe checkout", { account_id: acc.id, from: acc.plan, to: plan, session: s.id });
  return "applied";
}

/** The account of a subscription: the one we linked it to, else the `account_id` our Checkout Session put in its metadata. */
async function accountOfSubscription(tx: Tx, sub: Stripe.Subscription): Promise<string | undefined> {
  const [linked] = await tx
    .select({ accountId: billingSubscriptions.accountId })
    .from(billingSubscriptions)
    .where(eq(billingSubscriptions.stripeSubscriptionId, sub.id))
    .limit(1);
  return linked?.accountId ?? sub.metadata?.account_id;
}

/** When the paid period ends: `cancel_at` when set, else the item's `current_period_end` (on items since API 2025-03-31). */
function periodEnd(sub: Stripe.Subscription): Date | null {
  const s = sub.cancel_at ?? sub.items?.data?.[0]?.current_period_end;
  return typeof s === "number" ? new Date(s * 1000) : null;
}

interface Target {
  plan: PlanId;
  pendingPlan: PlanId | null;
  pendingAt: Date | null;
}

/** The plan the account has now and the change waiting for the period end, from the subscription Stripe describes. */
function targetOf(
  sub: Pick<Stripe.Subscription, "status" | "cancel_at" | "cancel_at_period_end">,
  pricePlan: PlanId,
  current: PlanId,
  row: SubscriptionRow | undefined,
  end: Date | null,
  at: Date,
): Target {
  if (sub.status === "incomplete")
    return { plan: current, pendingPlan: row?.pendingPlan as PlanId | null, pendingAt: row?.pendingAt ?? null };
  if (!ENTITLED.has(sub.status)) return { plan: "free", pendingPlan: null, pendingAt: null };
  let plan = pricePlan;
  let pending: Target["pendingPlan"] = null;
  let pendingAt: Date | null = null;
  if (rank(pricePlan) < rank(current)) {
    const scheduled = row?.pendingPlan === pricePlan ? row.pendingAt : null;
    if (scheduled && scheduled <= at) plan = pricePlan;
    else {
      // A downgrade: the customer keeps what they paid for until the period ends.
      plan = current;
      pending = pricePlan;
      pendingAt = scheduled ?? end ?? at;
    }
  }
  if (sub.cancel_at_period_end || sub.cancel_at) return { plan, pendingPlan: "free", pendingAt: end ?? at };
  return { plan, pendingPlan: pending, pendingAt };
}

async function onSubscriptionChanged(
  tx: Tx,
  cfg: StripeBillingConfig,
  log: Logger,
  sub: Stripe.Subscription,
  at: Date,
): Promise<EventOutcome> {
  const acc = await lockAccount(tx, await accountOfSubscription(tx, sub));
  if (!acc) return "ignored";
  if (acc.row && acc.row.stateAt > at) return "ignored";
  const pricePlan = planOfPrice(cfg, sub.items?.data?.[0]?.price?.id);
  if (!pricePlan) {
    log.warn("stripe subscription with a price not in STRIPE_PRICE_<PLAN> ignored", { subscription: sub.id });
    return "ignored";
  }
  const t = targetOf(sub, pricePlan, acc.plan, acc.row, periodEnd(sub), at);
  await saveRow(tx, acc.id, {
    stripeCustomerId: idOf(sub.customer),
    stripeSubscriptionId: sub.id,
    status: sub.status,
    plan: pricePlan,
    pendingPlan: t.pendingPlan,
    pendingAt: t.pendingAt,
    stateAt: at,
  });
  if (t.plan !== acc.plan) {
    await setPlan(tx, acc.id, t.plan);
    log.info("plan changed by stripe subscription", {
      account_id: acc.id,
      from: acc.plan,
      to: t.plan,
      subscription: sub.id,
      status: sub.status,
    });
  }
  return "applied";
}

/** The subscription ended (cancelled at the period end, or ended by Stripe): back to Free. */
async function onSubscriptionDeleted(tx: Tx, log: Logger, sub: Stripe.Subscription, at: Date): Promise<EventOutcome> {
  const acc = await lockAccount(tx, await accountOfSubscription(tx, sub));
  if (!acc) return "ignored";
  // The end of an older subscription does not touch the account's current one.
  if (acc.row?.stripeSubscriptionId && acc.row.stripeSubscriptionId !== sub.id) return "ignored";
  await saveRow(tx, acc.id, {
    stripeCustomerId: idOf(sub.customer),
    stripeSubscriptionId: sub.id,
    status: "canceled",
    plan: acc.row?.plan ?? acc.plan,
    pendingPlan: null,
    pendingAt: null,
    stateAt: at,
  });
  if (acc.plan !== "free") {
    await setPlan(tx, acc.id, "free");
    log.info("plan changed by stripe: subscription ended", {
      account_id: acc.id,
      from: acc.plan,
      to: "free",
      subscription: sub.id,
    });
  }
  return "applied";
}
