/** Billing (docs/billing.md): plan-change requests (`manual`), Stripe subscriptions and processed Stripe event ids. */
import { sql } from "drizzle-orm";
import { index, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.ts";

/** A customer's request to change plan, waiting for an operator (`manual` provider). */
export const upgradeRequests = pgTable(
  "upgrade_requests",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    fromPlan: text("from_plan").notNull(),
    toPlan: text("to_plan").notNull(),
    /** `pending` | `approved` | `rejected` | `superseded` (a newer request of the same account replaced it). */
    status: text("status").notNull().default("pending"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    decidedAt: timestamp("decided_at", { withTimezone: true }),
    /** Operator's note on approval or rejection; shown to the customer on rejection. */
    note: text("note"),
  },
  (t) => [
    // At most one open request per account: a new one supersedes the old in the same transaction.
    uniqueIndex("upgrade_requests_one_pending").on(t.accountId).where(sql`status = 'pending'`),
    index("upgrade_requests_status_idx").on(t.status, t.createdAt),
  ],
);

/** The account's Stripe subscription per the newest applied event; `pending_*`: a cancellation at period end. */
export const billingSubscriptions = pgTable(
  "billing_subscriptions",
  {
    accountId: text("account_id")
      .primaryKey()
      .references(() => accounts.id, { onDelete: "cascade" }),
    stripeCustomerId: text("stripe_customer_id"),
    stripeSubscriptionId: text("stripe_subscription_id"),
    /** Stripe's subscription status (`active`, `past_due`, `canceled`, …). */
    status: text("status").notNull(),
    /** The plan the subscription's price buys. */
    plan: text("plan").notNull(),
    pendingPlan: text("pending_plan"),
    pendingAt: timestamp("pending_at", { withTimezone: true }),
    /** `created` of the Stripe event that last set this row: older events arriving late are not applied. */
    stateAt: timestamp("state_at", { withTimezone: true }).notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("billing_subscriptions_subscription_key").on(t.stripeSubscriptionId)],
);

/** Stripe event ids already processed: a replayed or retried event has no second effect. */
export const stripeEvents = pgTable("stripe_events", {
  id: text("id").primaryKey(),
  type: text("type").notNull(),
  receivedAt: timestamp("received_at", { withTimezone: true }).notNull().defaultNow(),
});
