/** Each account's alert settings and recent alerts, for the dashboard's Alerts page (docs/alerts.md). */
import { desc, eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { accounts, alerts, alertSettings } from "../../db/schema/index.ts";
import { ALERT_KINDS, type AlertKind } from "./model.ts";
import { recordAlert } from "./record.ts";

export interface AlertSettingsView {
  /** The address alerts go to; null: the account's email. */
  email: string | null;
  accountEmail: string;
  /** Kinds turned off. */
  disabled: AlertKind[];
}

/** The account's settings (defaults when it never saved any). */
export async function readAlertSettings(db: DbOrTx, accountId: string): Promise<AlertSettingsView> {
  const [row] = await db
    .select({ email: alertSettings.email, disabled: alertSettings.disabledKinds, accountEmail: accounts.email })
    .from(accounts)
    .leftJoin(alertSettings, eq(alertSettings.accountId, accounts.id))
    .where(eq(accounts.id, accountId));
  const known = new Set<string>(ALERT_KINDS);
  return {
    email: row?.email ?? null,
    accountEmail: row?.accountEmail ?? "",
    disabled: (row?.disabled ?? []).filter((k): k is AlertKind => known.has(k)),
  };
}

/** Saves the address (null: the account's email) and the kinds turned off (unknown kinds are dropped). */
export async function saveAlertSettings(
  db: DbOrTx,
  accountId: string,
  s: { email: string | null; disabled: readonly string[] },
): Promise<void> {
  const disabled = ALERT_KINDS.filter((k) => s.disabled.includes(k));
  await db
    .insert(alertSettings)
    .values({ accountId, email: s.email, disabledKinds: disabled })
    .onConflictDoUpdate({
      target: alertSettings.accountId,
      set: { email: s.email, disabledKinds: disabled, updatedAt: sql`now()` },
    });
}

/** Queues a test email, one per account and UTC minute of `nowMs` (dedupe key); false when this minute's is queued. */
export async function queueTestEmail(db: DbOrTx, accountId: string, nowMs: number): Promise<boolean> {
  return recordAlert(db, { accountId, kind: "test", dedupeKey: new Date(nowMs).toISOString().slice(0, 16) });
}

export interface AlertListItem {
  kind: AlertKind;
  state: string;
  createdAt: Date;
  sentAt: Date | null;
  recipient: string | null;
  details: Record<string, unknown>;
}

/** The account's `limit` most recent alerts, newest first (shown with or without SMTP). */
export async function recentAlerts(db: DbOrTx, accountId: string, limit = 20): Promise<AlertListItem[]> {
  const rows = await db
    .select({
      kind: alerts.kind,
      state: alerts.state,
      createdAt: alerts.createdAt,
      sentAt: alerts.sentAt,
      recipient: alerts.recipient,
      details: alerts.details,
    })
    .from(alerts)
    .where(eq(alerts.accountId, accountId))
    .orderBy(desc(alerts.id))
    .limit(limit);
  return rows.map((r) => ({ ...r, kind: r.kind as AlertKind, details: (r.details ?? {}) as Record<string, unknown> }));
}
