/** Failed-attempt (NDR) reasons across couriers (docs/ndr.md): the closed set and the shared remark keywords. */
import type { RawCheckpoint } from "./checkpoint.ts";

/** The closed set, in the order docs/ndr.md lists it. `other`: a reason the tables do not know (counted, so they can grow). */
export const REASON_CODES = [
  "customer_unavailable",
  "customer_refused",
  "address_issue",
  "cod_not_ready",
  "rescheduled_by_customer",
  "premises_closed",
  "out_of_delivery_area",
  "damaged",
  "lost",
  "weather_or_disaster",
  "other",
] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

const CODES: ReadonlySet<string> = new Set(REASON_CODES);
/** True for a member of {@link REASON_CODES} (query validation). */
export const isReasonCode = (s: string): s is ReasonCode => CODES.has(s);

/** Whether a checkpoint carries a reason: an exception other than the return-to-origin steps (docs/ndr.md). */
export function carriesReason(c: Pick<RawCheckpoint, "state" | "subStatus">): boolean {
  return (
    c.state === "exception" &&
    c.subStatus !== "rto_initiated" &&
    c.subStatus !== "rto_in_transit" &&
    c.subStatus !== "rto_delivered"
  );
}

/** Remark keywords, first match wins, most specific first: our reading (docs/ndr.md#remark-keywords). */
const REMARK_KEYWORDS: readonly (readonly [RegExp, ReasonCode])[] = [
  [/damage|broken|tamper/i, "damaged"],
  [/\blost\b|missing|untraceable|misroute/i, "lost"],
  [
    /weather|\brain|flood|cyclone|storm|disaster|earthquake|landslide|curfew|bandh|strike|force majeure/i,
    "weather_or_disaster",
  ],
  [
    /out of (delivery |service(able)? )?area|non[- ]?serviceable|not serviceable|\boda\b|beyond (the )?delivery area/i,
    "out_of_delivery_area",
  ],
  [
    /\bcod\b|cash not|amount not ready|payment not ready|no (cash|money)|not ready with (cash|payment|amount)/i,
    "cod_not_ready",
  ],
  [
    /refus|reject|declin|not interested|does not want|doesn't want|cancel(l)?ed by (consignee|customer|buyer)/i,
    "customer_refused",
  ],
  [
    /reschedul|future (date|delivery)|deliver (later|tomorrow|next)|(asked|requested) (for )?(delivery )?(later|another|on)|postpone/i,
    "rescheduled_by_customer",
  ],
  [
    /(premises|office|shop|store|company|gate|door|house|residence) (is )?(closed|locked)|closed|holiday|sunday/i,
    "premises_closed",
  ],
  [
    /address|pin ?code|landmark|unlocatable|not locatable|cannot (be )?locate|could not locate|shifted|moved out|wrong (area|location)/i,
    "address_issue",
  ],
  [
    /not available|unavailable|not reachable|not at home|nobody|no one|no response|not responding|not contactable|unreachable|not picking|switched off/i,
    "customer_unavailable",
  ],
];

/** The reason the remark keywords give `text`, or undefined when none matches. */
export function reasonFromRemark(text: string): ReasonCode | undefined {
  if (!text) return undefined;
  for (const [re, code] of REMARK_KEYWORDS) if (re.test(text)) return code;
  return undefined;
}
