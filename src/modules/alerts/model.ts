/** Alert kinds and what the dashboard calls them (docs/alerts.md). */

/** Quota marks that raise an alert, percent of the plan's monthly quota (docs/alerts.md#kinds); kind `quota_<mark>`. */
export const QUOTA_MARKS = [80, 100] as const;
const QUOTA_KINDS = QUOTA_MARKS.map((m) => `quota_${m}` as const);

/** Kinds an owner can turn off; `test` (the settings page's test email) is always sent. */
export const ALERT_KINDS = ["webhook_deactivated", ...QUOTA_KINDS, "secret_rotated", "api_key_created"] as const;
/** `digest`: the alerts of one kind folded in an hour; `address_confirmation`: the link to a new alert address. */
export type AlertKind = (typeof ALERT_KINDS)[number] | "test" | "digest" | "address_confirmation";

export const KIND_LABELS: Record<AlertKind, string> = {
  webhook_deactivated: "A webhook is deactivated after repeated failed deliveries",
  quota_80: `The monthly quota reaches ${QUOTA_MARKS[0]}\u00a0%`,
  quota_100: "The monthly quota is used up",
  secret_rotated: "The webhook signing secret is rotated",
  api_key_created: "An API key is created",
  test: "Test email",
  digest: "Digest of alerts over the hourly limit",
  address_confirmation: "Confirmation of a new alert address",
};

/**
 * At most this many emails of one kind per account in a window of {@link ALERT_WINDOW_MS}; later alerts of the kind
 * are folded into one digest sent when the window ends (docs/alerts.md#limits-and-digests).
 */
export const ALERTS_PER_WINDOW = 5;
export const ALERT_WINDOW_MS = 3_600_000;
/** Confirmation emails an account may ask for per hour (each goes to an address not yet confirmed). */
export const CONFIRMATIONS_PER_HOUR = 3;
/** How long a confirmation link works, ms. */
export const ADDRESS_LINK_TTL_MS = 24 * 3_600_000;

/** Kinds counted against {@link ALERTS_PER_WINDOW}: all but digests and confirmations (limited on their own). */
export const isLimitedKind = (k: AlertKind) => k !== "digest" && k !== "address_confirmation";

/** The quota marks m crossed from `before` to `after` units of `quota`: before < m % of quota ≤ after. */
export function crossedMarks(before: number, after: number, quota: number): (typeof QUOTA_MARKS)[number][] {
  if (quota <= 0) return [];
  return QUOTA_MARKS.filter((m) => before * 100 < quota * m && after * 100 >= quota * m);
}
