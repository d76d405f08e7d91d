/**
 * Plan changes go through a billing provider (issue 7: payment is out of
 * scope). The dashboard asks the provider; only an `approved` answer changes
 * the plan, with `setPlan`, so the account's API keys see the new quota and
 * rate limit on their next request. A real provider (checkout page,
 * confirmation webhook) implements the same interface and answers
 * `redirect`; its confirmation handler then calls `setPlan` itself.
 */
import type { PlanId } from "../billing/plans.ts";

export interface PlanChangeRequest {
  accountId: string;
  email: string;
  from: PlanId;
  to: PlanId;
}

export type PlanChangeDecision =
  | { status: "approved"; reference: string }
  | { status: "redirect"; url: string }
  | { status: "declined"; reason: string };

export interface BillingProvider {
  /** Shown on the billing page, e.g. "Sandbox (no payment taken)". */
  readonly label: string;
  /** Decides an upgrade or downgrade. Never throws for a business refusal: answers `declined`. */
  requestPlanChange(req: PlanChangeRequest): Promise<PlanChangeDecision>;
}

/** Approves every change at once and takes no payment. */
export const sandboxBilling: BillingProvider = {
  label: "Sandbox billing: plan changes are approved at once and no payment is taken",
  async requestPlanChange() {
    return { status: "approved", reference: `sandbox_${crypto.randomUUID()}` };
  },
};
