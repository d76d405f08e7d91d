/** Status mapping as data: codes, then keywords, then in transit, never delivered (carriers/README.md). */
import type { ShipmentState, SubStatus } from "../../../domain/states.ts";

export interface StatusRule {
  state: ShipmentState;
  sub?: SubStatus;
}

export type StatusTable = Readonly<Record<string, StatusRule>>;

/** Shorthands for tables: P=pending, T=in_transit, O=out_for_delivery, D=delivered, E=exception, R=returned, C=cancelled. */
export const P: StatusRule = { state: "pending" };
export const T: StatusRule = { state: "in_transit" };
export const O: StatusRule = { state: "out_for_delivery" };
export const D: StatusRule = { state: "delivered" };
export const E: StatusRule = { state: "exception" };
export const R: StatusRule = { state: "returned" };
export const C: StatusRule = { state: "cancelled" };
export const sub = (rule: StatusRule, s: SubStatus): StatusRule => ({ state: rule.state, sub: s });

/** Keyword fallback shared by every courier, most specific first. */
const KEYWORDS: readonly [RegExp, StatusRule][] = [
  [
    /\b(rto|return(ed)? to (origin|shipper|sender))\b.*\b(delivered|completed)\b|\breturned to (shipper|sender|origin)\b/i,
    sub(R, "rto_delivered"),
  ],
  [/\brto\b|return to origin|return(ing)? to (shipper|sender)|returned\b/i, sub(E, "rto_initiated")],
  [/\bcancel+ed\b|\bvoid(ed)?\b/i, C],
  [
    /\bundelivered\b|not delivered|delivery attempt(ed)? fail|failed (delivery )?attempt|consignee (not available|unavailable)|\bndr\b|attempt(ed)? unsuccessful/i,
    sub(E, "delivery_attempt_failed"),
  ],
  [/\b(held|on hold|hold at)\b/i, sub(E, "held")],
  [/\b(damaged|lost|exception)\b/i, E],
  [/out for delivery|\bofd\b|with delivery (agent|courier)|dispatched for delivery|outscan/i, O],
  [/ready for pick ?up|available for pick ?up|awaiting collection/i, sub(O, "ready_for_pickup")],
  [/\bdelivered\b/i, D],
  [/picked ?up|pickup (done|completed)|shipment picked/i, sub(T, "picked_up")],
  [
    /(manifest(ed)?|booked|order (information|info) received|shipment information received|label created|data received)/i,
    sub(P, "info_received"),
  ],
  [/reached destination|arrived at destination|at destination (hub|facility)/i, sub(T, "reached_destination")],
];

/** Maps by keyword on the courier's text; undefined when nothing matches. */
export function byKeyword(text: string | null | undefined): StatusRule | undefined {
  if (!text) return undefined;
  for (const [re, rule] of KEYWORDS) if (re.test(text)) return rule;
  return undefined;
}

/** Exact key in `table` (`keys` in order, e.g. `"UD:Dispatched"` then `"UD"`), else keyword on `text`, else in transit. */
export function mapStatus(
  table: StatusTable,
  keys: readonly (string | null | undefined)[],
  text: string | null | undefined,
): StatusRule {
  for (const k of keys) {
    if (!k) continue;
    const rule = table[k] ?? table[k.toUpperCase()];
    if (rule) return rule;
  }
  return byKeyword(text) ?? T;
}

/** An ordered list of text rules: the first pattern that matches `text` wins. */
export type TextRules = readonly (readonly [RegExp, StatusRule])[];

/** The rule of the first pattern in `rules` that matches `text`, or undefined. */
export function firstMatch(rules: TextRules, text: string): StatusRule | undefined {
  for (const [re, rule] of rules) if (re.test(text)) return rule;
  return undefined;
}

/** An exception without a sub-reason takes the one the text gives, when the keywords find one. */
export function withExceptionReason(rule: StatusRule, text: string): StatusRule {
  if (rule.state !== "exception" || rule.sub) return rule;
  const k = byKeyword(text);
  return k?.state === "exception" && k.sub ? k : rule;
}
