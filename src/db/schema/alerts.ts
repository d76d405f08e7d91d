/**
 * Owner alerts (docs/alerts.md): the alert email outbox (unique dedupe key), each account's alert settings, the
 * per-kind sending windows and the alert address's one-time confirmation links.
 */
import { sql } from "drizzle-orm";
import { bigint, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.ts";

export const alerts = pgTable(
  "alerts",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** modules/alerts/model.ts `AlertKind`. */
    kind: text("kind").notNull(),
    /** What makes one alert of `kind` (a webhook's deactivation instant, a quota month, a key id): at most one row each. */
    dedupeKey: text("dedupe_key").notNull(),
    details: jsonb("details").notNull().default({}),
    /**
     * `pending` | `queued` (due like pending; kinds older releases do not send: digests, confirmations) | `sent` |
     * `skipped` (kind turned off) | `folded` (over the hourly limit: in digest `digest_id`) | `failed` (gave up).
     */
    state: text("state").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull().defaultNow(),
    leaseUntil: timestamp("lease_until", { withTimezone: true }),
    lastError: text("last_error"),
    recipient: text("recipient"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    sentAt: timestamp("sent_at", { withTimezone: true }),
    /** A folded alert: the digest alert that lists it. */
    digestId: bigint("digest_id", { mode: "number" }),
  },
  (t) => [
    uniqueIndex("alerts_dedupe_key").on(t.accountId, t.kind, t.dedupeKey),
    index("alerts_due_idx").on(t.nextAttemptAt).where(sql`state = 'pending'`),
    index("alerts_account_idx").on(t.accountId, t.id),
    index("alerts_due_any_idx").on(t.nextAttemptAt).where(sql`state in ('pending', 'queued')`),
    index("alerts_digest_idx").on(t.digestId).where(sql`digest_id is not null`),
  ],
);

export const alertSettings = pgTable("alert_settings", {
  accountId: text("account_id")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  /** The confirmed address; null: the account's email. A new address waits in `alert_address_links`. */
  email: text("email"),
  /** Kinds the owner turned off. */
  disabledKinds: text("disabled_kinds").array().notNull().default(sql`'{}'::text[]`),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

/** The e-mails sent per account and kind in the current one-hour window (docs/alerts.md#limits-and-digests). */
export const alertWindows = pgTable(
  "alert_windows",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull(),
    sent: integer("sent").notNull(),
  },
  (t) => [primaryKey({ name: "alert_windows_pkey", columns: [t.accountId, t.kind] })],
);

/** Confirmation links of a new alert address: only the SHA-256 of the 256-bit token is stored; used once, expiring. */
export const alertAddressLinks = pgTable(
  "alert_address_links",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("alert_address_links_token_hash_key").on(t.tokenHash),
    index("alert_address_links_account_idx").on(t.accountId),
  ],
);
