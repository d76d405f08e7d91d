/** Accounts, API keys, usage counters, rate-limit windows and dashboard sessions (spec: Authentication, Limits). */
import { boolean, date, index, integer, pgTable, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";

export const accounts = pgTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    email: text("email").notNull(),
    /** argon2id via Bun.password; null for accounts made by the operator CLI without a password. */
    passwordHash: text("password_hash"),
    plan: text("plan").notNull().default("free"),
    /** `active` | `needs_attention` (spec: Errors, 402 ACCOUNT_NEEDS_ATTENTION). */
    status: text("status").notNull().default("active"),
    /** Webhook signing secret, AES-256-GCM encrypted (src/secrets/cipher.ts); null until the first create or rotation. */
    webhookSecretEnc: text("webhook_secret_enc"),
    /** The secret before the last rotation, kept for the 15-minute overlap receivers observe (spec: Delivery rules 7). */
    webhookSecretPrevEnc: text("webhook_secret_prev_enc"),
    webhookSecretRotatedAt: timestamp("webhook_secret_rotated_at", { withTimezone: true }),
    /** True once the raw secret has been returned to the customer (spec: secret shown once). */
    webhookSecretRevealed: boolean("webhook_secret_revealed").notNull().default(false),
    /** Key deriving the account's public link tokens, AES-256-GCM encrypted like the secrets above; null until first needed. */
    publicLinkKeyEnc: text("public_link_key_enc"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("accounts_email_key").on(t.email)],
);

export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** SHA-256 hex of the whole key: keys are 256-bit random, so a fast hash is safe and lets lookup be one index probe. */
    keyHash: text("key_hash").notNull(),
    prefix: text("prefix").notNull(),
    name: text("name").notNull().default("default"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [uniqueIndex("api_keys_key_hash_key").on(t.keyHash), index("api_keys_account_idx").on(t.accountId)],
);

/** Monthly `/v1/track` usage: one row per account per calendar month in UTC (`period` = `YYYY-MM`). */
export const usageCounters = pgTable(
  "usage_counters",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    period: text("period").notNull(),
    used: integer("used").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.period] })],
);

/** `/v1/track` usage by UTC day, written with {@link usageCounters}: units count on the day granted, summing to `used`. */
export const usageDaily = pgTable(
  "usage_daily",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    day: date("day", { mode: "string" }).notNull(),
    used: integer("used").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.day] })],
);

/** Fixed-window counters shared by every replica (`rl:<account>`, sign-in throttles); housekeeping prunes old windows. */
export const rateWindows = pgTable(
  "rate_windows",
  {
    key: text("key").notNull(),
    windowStart: timestamp("window_start", { withTimezone: true }).notNull(),
    count: integer("count").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.key, t.windowStart] }), index("rate_windows_start_idx").on(t.windowStart)],
);

/** Demo hits for the rolling-hour limit per client IP (spec: Limits, 5 per hour per IP). */
export const demoHits = pgTable(
  "demo_hits",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    ip: text("ip").notNull(),
    at: timestamp("at", { withTimezone: true }).notNull(),
  },
  (t) => [index("demo_hits_ip_at_idx").on(t.ip, t.at), index("demo_hits_at_idx").on(t.at)],
);

/** Server-side dashboard sessions (docs/dashboard.md). */
export const sessions = pgTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    /** SHA-256 of the cookie value; the cookie itself is never stored. */
    tokenHash: text("token_hash").notNull(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    csrfToken: text("csrf_token").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [uniqueIndex("sessions_token_hash_key").on(t.tokenHash), index("sessions_expires_idx").on(t.expiresAt)],
);
