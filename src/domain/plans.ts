/** The plan catalogue (spec: Limits; Growth and Business: spec-map Decisions); prices in INR. */
export type PlanId = "free" | "starter" | "pro" | "growth" | "business";

export interface Plan {
  id: PlanId;
  name: string;
  /** `/v1/track` requests per calendar month (UTC). */
  monthly_quota: number;
  /** Authenticated `/v1` requests per minute, all keys of the account together. */
  rate_limit_per_minute: number;
  /** Whether `mode: "live"` webhooks are allowed (spec: plan gate per mode). */
  live_webhooks: boolean;
  price_inr_per_month: number;
}

const FREE: Plan = {
  id: "free",
  name: "Free",
  monthly_quota: 100,
  rate_limit_per_minute: 10,
  live_webhooks: false,
  price_inr_per_month: 0,
};

export const PLANS: readonly Plan[] = [
  FREE,
  {
    id: "starter",
    name: "Starter",
    monthly_quota: 5_000,
    rate_limit_per_minute: 60,
    live_webhooks: false,
    price_inr_per_month: 999,
  },
  {
    id: "pro",
    name: "Pro",
    monthly_quota: 50_000,
    rate_limit_per_minute: 300,
    live_webhooks: false,
    price_inr_per_month: 4_999,
  },
  // Growth and Business: the service's decision (docs/spec-map.md, "Decisions").
  {
    id: "growth",
    name: "Growth",
    monthly_quota: 150_000,
    rate_limit_per_minute: 600,
    live_webhooks: true,
    price_inr_per_month: 12_999,
  },
  {
    id: "business",
    name: "Business",
    monthly_quota: 500_000,
    rate_limit_per_minute: 1_200,
    live_webhooks: true,
    price_inr_per_month: 34_999,
  },
];

export const PLAN_IDS = PLANS.map((p) => p.id) as PlanId[];

const BY_ID = new Map(PLANS.map((p) => [p.id, p]));

/** The plan with this id; unknown ids (which the database never holds) fall back to Free. */
export function planOf(id: string): Plan {
  return BY_ID.get(id as PlanId) ?? FREE;
}

export function isPlanId(id: string): id is PlanId {
  return BY_ID.has(id as PlanId);
}
