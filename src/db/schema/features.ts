/** First responses of `POST /v1/…` calls with an `Idempotency-Key`, per account + key, kept 24 h (docs/idempotency.md). */
import { index, integer, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.ts";

export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    /** SHA-256 hex of method, path and the request body as parsed: a retry must send the same. */
    requestHash: text("request_hash").notNull(),
    /** `running` while the first request executes, `done` once its response is stored. */
    state: text("state").notNull(),
    /** While `running`: when another request may take the key over (its first request died). */
    lockedUntil: timestamp("locked_until", { withTimezone: true }),
    status: integer("status"),
    /** The stored response body, AES-256-GCM encrypted with SECRETS_KEY (it can hold a signing secret). */
    bodyEnc: text("body_enc"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key] }), index("idempotency_keys_created_idx").on(t.createdAt)],
);
