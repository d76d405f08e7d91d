/** Which plan a Stripe Price buys, and the order of plans (what counts as an upgrade). */
import { PLAN_IDS, type PlanId } from "../../../domain/plans.ts";
import type { StripeBillingConfig } from "./client.ts";

/** The plan bought by `priceId`; undefined for a price not in STRIPE_PRICE_<PLAN>. */
export function planOfPrice(cfg: StripeBillingConfig, priceId: string | undefined): PlanId | undefined {
  if (!priceId) return undefined;
  for (const [plan, id] of Object.entries(cfg.prices)) if (id === priceId) return plan as PlanId;
  return undefined;
}

/** Position in the catalogue (free = 0): a higher rank is an upgrade. */
export const rank = (p: PlanId): number => PLAN_IDS.indexOf(p);
