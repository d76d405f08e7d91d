/** Plan changes through the provider chosen by `BILLING_PROVIDER` (docs/billing.md). */
import type { PlanId } from "../../domain/plans.ts";

type BillingProviderKind = "sandbox" | "manual" | "stripe";

export interface PlanChangeRequest {
  accountId: string;
  email: string;
  from: PlanId;
  to: PlanId;
}

export type PlanChangeDecision =
  /** The caller applies the plan now (sandbox only). */
  | { status: "approved"; reference: string }
  /** Send the customer to a payment page (Stripe Checkout); the plan changes on the provider's confirmation. */
  | { status: "redirect"; url: string }
  /** Recorded for an operator to decide (`manual`). */
  | { status: "requested"; requestId: string }
  /** Sent to the payment provider; the plan follows its confirmation (an upgrade) or the period end (a downgrade). */
  | { status: "submitted"; reference: string }
  | { status: "declined"; reason: string };

/** What the billing page shows beside the plan table. */
export interface BillingState {
  pendingRequest?: { id: string; toPlan: PlanId; createdAt: Date };
  lastDecision?: { id: string; toPlan: PlanId; status: "approved" | "rejected"; note: string | null; decidedAt: Date };
  /** A change that takes effect at the end of the paid period (`stripe`). */
  scheduled?: { plan: PlanId; at: Date };
}

export interface BillingProvider {
  /** Which provider this is; absent for test doubles. */
  readonly kind?: BillingProviderKind;
  /** One sentence shown on the billing page, e.g. how plan changes are confirmed. */
  readonly label: string;
  /** Whether the page offers `plan` (Stripe: only plans with a configured price, and Free). Default: every plan. */
  offers?(plan: PlanId): boolean;
  /** Decides an upgrade or downgrade. Never throws for a business refusal: answers `declined`. */
  requestPlanChange(req: PlanChangeRequest): Promise<PlanChangeDecision>;
  state?(accountId: string): Promise<BillingState>;
}

/** Approves every change at once, no payment; configuration allows it only with sandbox couriers (src/config/index.ts). */
export const sandboxBilling: BillingProvider = {
  kind: "sandbox",
  label: "Sandbox billing: plan changes are approved at once and no payment is taken",
  async requestPlanChange() {
    return { status: "approved", reference: `sandbox_${crypto.randomUUID()}` };
  },
};
