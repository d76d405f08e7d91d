/** Alert kinds and what the dashboard calls them (docs/alerts.md). */

/** Kinds an owner can turn off; `test` (the settings page's test email) is always sent. */
export const ALERT_KINDS = [
  "webhook_deactivated",
  "quota_80",
  "quota_100",
  "secret_rotated",
  "api_key_created",
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number] | "test";

export const KIND_LABELS: Record<AlertKind, string> = {
  webhook_deactivated: "A webhook is deactivated after repeated failed deliveries",
  quota_80: "The monthly quota reaches 80\u00a0%",
  quota_100: "The monthly quota is used up",
  secret_rotated: "The webhook signing secret is rotated",
  api_key_created: "An API key is created",
  test: "Test email",
};

/** Quota marks that raise an alert, percent of the plan's monthly quota (docs/alerts.md#kinds). */
export const QUOTA_MARKS = [80, 100] as const;

/** The quota marks m crossed from `before` to `after` units of `quota`: before < m % of quota ≤ after. */
export function crossedMarks(before: number, after: number, quota: number): (typeof QUOTA_MARKS)[number][] {
  if (quota <= 0) return [];
  return QUOTA_MARKS.filter((m) => before * 100 < quota * m && after * 100 >= quota * m);
}
