/** Owner alerts (docs/alerts.md): the alert email outbox (unique dedupe key) and each account's alert settings. */
import { sql } from "drizzle-orm";
import { bigint, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
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
    /** `pending` | `sent` | `skipped` (kind turned off) | `failed` (gave up). */
    state: text("state").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull().defaultNow(),
    leaseUntil: timestamp("lease_until", { withTimezone: true }),
    lastError: text("last_error"),
    recipient: text("recipient"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    sentAt: timestamp("sent_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("alerts_dedupe_key").on(t.accountId, t.kind, t.dedupeKey),
    index("alerts_due_idx").on(t.nextAttemptAt).where(sql`state = 'pending'`),
    index("alerts_account_idx").on(t.accountId, t.id),
  ],
);

export const alertSettings = pgTable("alert_settings", {
  accountId: text("account_id")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  /** Null: the account's email. */
  email: text("email"),
  /** Kinds the owner turned off. */
  disabledKinds: text("disabled_kinds").array().notNull().default(sql`'{}'::text[]`),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});
