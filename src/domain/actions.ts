/**
 * NDR actions (docs/ndr-actions.md): what a merchant can ask a courier to do after a failed delivery, and the
 * eligibility rules checked before any courier is called. The per-courier rules come from each courier's docs
 * (the adapter's `actions.rules`, e.g. Delhivery's allowed NSL codes); the plan gate is ours.
 */
import type { StoredCheckpoint } from "./checkpoint.ts";
import type { PlanId } from "./plans.ts";
import type { ShipmentState, SubStatus } from "./states.ts";

export const ACTION_NAMES = ["reattempt", "defer_delivery", "update_consignee", "return_to_origin"] as const;
export type ActionName = (typeof ACTION_NAMES)[number];

export const ACTION_STATUSES = ["requested", "accepted", "rejected", "failed"] as const;

/** Plans that may send actions: a courier instruction is a paid feature (docs/ndr-actions.md, "Plans"). */
const ACTION_PLANS: readonly PlanId[] = ["pro", "growth", "business"];

export interface Consignee {
  name?: string;
  phone?: string;
  address?: string;
  pincode?: string;
  landmark?: string;
}

/** One courier's rule for one action, from its docs. */
interface ActionRule {
  /** Our states the shipment must be in (with `subStatuses`, when given, one of those too). */
  states: readonly ShipmentState[];
  subStatuses?: readonly SubStatus[];
  /** Sub-statuses that rule the action out whatever the state (a return already under way). */
  notSubStatuses?: readonly SubStatus[];
  /** The courier's status codes the newest checkpoint must carry (`rawCode`); absent: any. */
  codes?: readonly string[];
  /** `defer_delivery`: the latest date, in days after the first failed attempt carrying one of `codes`. */
  maxDeferDays?: number;
  /** `update_consignee`: the fields the courier can change; others are refused. */
  consigneeFields?: readonly (keyof Consignee)[];
}

export type ActionRules = Readonly<Partial<Record<ActionName, ActionRule>>>;

/** Why an action is refused: the error code, the rule's name (in the message) and the text. */
export interface Refusal {
  code:
    | "ACTION_NOT_SUPPORTED"
    | "ACTION_NOT_ELIGIBLE"
    | "ACTION_DATE_OUT_OF_RANGE"
    | "ACTION_INVALID"
    | "PLAN_UPGRADE_REQUIRED";
  rule: string;
  message: string;
}

export interface EligibilityInput {
  action: ActionName;
  plan: PlanId;
  state: ShipmentState;
  subStatus: SubStatus | null;
  /** Newest first, as stored. */
  checkpoints: readonly StoredCheckpoint[];
  deferredDate?: string;
  consignee?: Consignee;
  /** Today in the courier's calendar, `YYYY-MM-DD`. */
  today: string;
}

const addDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/**
 * The refusal for an action, or null when it may be sent. Order: supported, plan, state, status code, dates and
 * fields, so the first broken rule is named.
 */
export function checkEligibility(rules: ActionRules | null, i: EligibilityInput): Refusal | null {
  const rule = rules?.[i.action];
  if (!rule)
    return {
      code: "ACTION_NOT_SUPPORTED",
      rule: "courier_action_api",
      message: `This courier has no documented API for ${i.action}; GET /v1/couriers lists each courier's actions.`,
    };
  if (!ACTION_PLANS.includes(i.plan))
    return {
      code: "PLAN_UPGRADE_REQUIRED",
      rule: "plan",
      message: `Actions need the ${ACTION_PLANS.join(", ")} plan.`,
    };
  if (
    !rule.states.includes(i.state) ||
    (rule.subStatuses && !(i.subStatus && rule.subStatuses.includes(i.subStatus))) ||
    (i.subStatus && rule.notSubStatuses?.includes(i.subStatus))
  )
    return {
      code: "ACTION_NOT_ELIGIBLE",
      rule: "state",
      message: `Rule state: ${i.action} needs the shipment in ${rule.states.join(" or ")}${rule.subStatuses ? ` (${rule.subStatuses.join(", ")})` : ""}; it is ${i.state}${i.subStatus ? ` (${i.subStatus})` : ""}.`,
    };
  const code = i.checkpoints[0]?.rawCode ?? null;
  if (rule.codes && (!code || !rule.codes.includes(code)))
    return {
      code: "ACTION_NOT_ELIGIBLE",
      rule: "status_code",
      message: `Rule status_code: the courier accepts ${i.action} only after status ${rule.codes.join(", ")}; the newest is ${code ?? "none"}.`,
    };
  if (i.action === "defer_delivery") {
    if (!i.deferredDate)
      return { code: "ACTION_INVALID", rule: "deferred_date", message: "defer_delivery needs deferred_date." };
    const first = firstFailedDate(i.checkpoints, rule.codes);
    const latest = first && rule.maxDeferDays !== undefined ? addDays(first, rule.maxDeferDays) : undefined;
    if (i.deferredDate <= i.today || (latest && i.deferredDate > latest))
      return {
        code: "ACTION_DATE_OUT_OF_RANGE",
        rule: "deferred_date",
        message: `Rule deferred_date: it must be after ${i.today}${latest ? ` and at most ${latest} (${rule.maxDeferDays} days after the first failed attempt, ${first})` : ""}.`,
      };
  } else if (i.deferredDate !== undefined)
    return { code: "ACTION_INVALID", rule: "deferred_date", message: "deferred_date is for defer_delivery only." };
  if (i.action === "update_consignee") {
    const given = Object.entries(i.consignee ?? {}).filter(([, v]) => v !== undefined && v !== "");
    if (given.length === 0)
      return { code: "ACTION_INVALID", rule: "consignee", message: "update_consignee needs at least one field." };
    const bad = given.map(([k]) => k).filter((k) => !rule.consigneeFields?.includes(k as keyof Consignee));
    if (bad.length > 0)
      return {
        code: "ACTION_NOT_SUPPORTED",
        rule: "consignee_fields",
        message: `Rule consignee_fields: this courier can change ${rule.consigneeFields?.join(", ") ?? "nothing"}, not ${bad.join(", ")}.`,
      };
  } else if (i.consignee !== undefined)
    return { code: "ACTION_INVALID", rule: "consignee", message: "consignee is for update_consignee only." };
  return null;
}

/** The local date of the oldest checkpoint with one of `codes` (any exception without codes): the first pending date. */
function firstFailedDate(checkpoints: readonly StoredCheckpoint[], codes?: readonly string[]): string | undefined {
  let first: string | undefined;
  for (const c of checkpoints)
    if (codes ? c.rawCode !== null && codes.includes(c.rawCode) : c.state === "exception") first = c.localDate;
  return first;
}

/** `9876543210` → `98******10`; short values all stars. Masked values are all the API shows of consignee data. */
function maskValue(v: string): string {
  const s = [...v];
  if (s.length <= 4) return "*".repeat(s.length);
  return s.slice(0, 2).join("") + "*".repeat(s.length - 4) + s.slice(-2).join("");
}

export function maskConsignee(c: Consignee): Consignee {
  return Object.fromEntries(Object.entries(c).map(([k, v]) => [k, typeof v === "string" ? maskValue(v) : v]));
}
