/** Each account's alert settings and recent alerts, for the dashboard's Alerts page (docs/alerts.md). */
import { desc, eq, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import { accounts, alerts, alertSettings } from "../../db/schema/index.ts";
import { cancelPendingAddress, pendingAddress, requestAddress } from "./address.ts";
import { ALERT_KINDS, type AlertKind } from "./model.ts";
import { recordAlert } from "./record.ts";

export interface AlertSettingsView {
  /** The confirmed address alerts go to; null: the account's email. */
  email: string | null;
  /** A new address waiting for its confirmation link to be opened (alerts still go to `email`). */
  pending: { email: string; expiresAt: Date } | null;
  accountEmail: string;
  /** Kinds turned off. */
  disabled: AlertKind[];
}

/** The account's settings (defaults when it never saved any); `nowMs` decides which links are still live. */
export async function readAlertSettings(db: DbOrTx, accountId: string, nowMs: number): Promise<AlertSettingsView> {
  const [row] = await db
    .select({ email: alertSettings.email, disabled: alertSettings.disabledKinds, accountEmail: accounts.email })
    .from(accounts)
    .leftJoin(alertSettings, eq(alertSettings.accountId, accounts.id))
    .where(eq(accounts.id, accountId));
  const known = new Set<string>(ALERT_KINDS);
  return {
    email: row?.email ?? null,
    pending: await pendingAddress(db, accountId, nowMs),
    accountEmail: row?.accountEmail ?? "",
    disabled: (row?.disabled ?? []).filter((k): k is AlertKind => known.has(k)),
  };
}

/**
 * Saves the kinds turned off (unknown kinds are dropped) and, when given, the address as confirmed (null: the
 * account's email); a new address from the owner goes through {@link changeAlertAddress} instead.
 */
export async function saveAlertSettings(
  db: DbOrTx,
  accountId: string,
  s: { email?: string | null; disabled: readonly string[] },
): Promise<void> {
  const disabled = ALERT_KINDS.filter((k) => s.disabled.includes(k));
  const email = s.email === undefined ? {} : { email: s.email };
  await db
    .insert(alertSettings)
    .values({ accountId, disabledKinds: disabled, ...email })
    .onConflictDoUpdate({
      target: alertSettings.accountId,
      set: { disabledKinds: disabled, ...email, updatedAt: sql`now()` },
    });
}

/** What {@link changeAlertAddress} did; `limited`: nothing, the hour's confirmation emails are spent. */
export type AddressChange = "unchanged" | "reset" | "requested" | "limited";

/**
 * The owner asks for alerts at `email` (null or the sign-in address: back to the sign-in address, at once). A new
 * address is only pending: it gets a confirmation link and alerts keep going where they went until it is opened
 * (docs/alerts.md#the-alert-address). The address waiting already, or the confirmed one, changes nothing.
 */
export async function changeAlertAddress(
  db: Db,
  secretsKey: Uint8Array,
  accountId: string,
  email: string | null,
  nowMs: number,
): Promise<AddressChange> {
  const cur = await readAlertSettings(db, accountId, nowMs);
  if (email === null || email === cur.accountEmail) {
    if (cur.email === null && !cur.pending) return "unchanged";
    await cancelPendingAddress(db, accountId, nowMs);
    await saveAlertSettings(db, accountId, { email: null, disabled: cur.disabled });
    return "reset";
  }
  if (email === cur.pending?.email) return "unchanged";
  if (email === cur.email) {
    await cancelPendingAddress(db, accountId, nowMs);
    return "unchanged";
  }
  return (await requestAddress(db, secretsKey, accountId, email, nowMs)) ? "requested" : "limited";
}

/** Sends the pending address's link again (a new token; the old one stops working), within the hourly limit. */
export async function resendConfirmation(
  db: Db,
  secretsKey: Uint8Array,
  accountId: string,
  nowMs: number,
): Promise<AddressChange> {
  const pending = await pendingAddress(db, accountId, nowMs);
  if (!pending) return "unchanged";
  return (await requestAddress(db, secretsKey, accountId, pending.email, nowMs)) ? "requested" : "limited";
}

/** Queues a test email, one per account and UTC minute of `nowMs` (dedupe key); false when this minute's is queued. */
export async function queueTestEmail(db: DbOrTx, accountId: string, nowMs: number): Promise<boolean> {
  return recordAlert(db, { accountId, kind: "test", dedupeKey: new Date(nowMs).toISOString().slice(0, 16), at: nowMs });
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
