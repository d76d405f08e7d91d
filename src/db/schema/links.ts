/** One-time password links (docs/dashboard.md): only the SHA-256 of the 256-bit token is stored; used once, expiring. */
import { index, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.ts";

export const passwordLinks = pgTable(
  "password_links",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** `reset` (operator CLI) | `welcome` (development account's first start). */
    purpose: text("purpose").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("password_links_token_hash_key").on(t.tokenHash),
    index("password_links_account_idx").on(t.accountId),
  ],
);
