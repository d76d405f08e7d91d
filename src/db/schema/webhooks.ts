/**
 * Webhooks, the delivery outbox and the attempt log (spec: Webhook, the two
 * lifecycle tables, Delivery rules; docs/webhooks.md).
 */
import { bigint, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.ts";
import { shipments } from "./shipments.ts";

export const webhooks = pgTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    events: text("events").array().notNull(),
    /** `test` | `live` */
    mode: text("mode").notNull(),
    description: text("description"),
    /** `active` | `deactivated` */
    status: text("status").notNull().default("active"),
    /** Consecutive failed deliveries (live only; spec: Live webhook lifecycle). */
    failureCount: integer("failure_count").notNull().default(0),
    /**
     * Custom headers sent on every attempt (docs/webhooks.md, "Custom headers"): the `{ name: value }` object as
     * JSON, encrypted like the signing secret (src/secrets/cipher.ts) with `webhook-headers:<id>` as associated data.
     */
    headersEnc: text("headers_enc"),
    /** The same names with masked values, what the API shows (never a whole value). */
    headersMasked: jsonb("headers_masked").$type<Record<string, string>>().notNull().default({}),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("webhooks_account_idx").on(t.accountId)],
);

/**
 * The outbox: one row per event per subscribed, active webhook (spec: Events rule 2), plus one per test fire.
 * No index covers a column the claim or outcome writes (HOT updates, fillfactor 50); partitioned by week of
 * `created_at` (migration 0022). Why: docs/webhooks.md, "The worker"; docs/capacity.md#partitioned-history.
 */
export const deliveries = pgTable(
  "deliveries",
  {
    id: text("id").notNull(),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** Null for test fires. */
    eventId: text("event_id"),
    shipmentId: text("shipment_id").references(() => shipments.id, { onDelete: "cascade" }),
    eventType: text("event_type").notNull(),
    /** `live` | `test` (header X-Webhook-Mode). */
    mode: text("mode").notNull(),
    /** `pending` | `delivered` | `abandoned` | `dropped` */
    state: text("state").notNull().default("pending"),
    /** Attempts made so far (0..6). */
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }),
    leaseUntil: timestamp("lease_until", { withTimezone: true }),
    enqueuedAt: timestamp("enqueued_at", { withTimezone: true }).notNull(),
    /** The event's number for this webhook (1, 2, 3… gap-free; null for test fires), see `webhookSequences`. */
    sequence: bigint("sequence", { mode: "number" }),
    /** For test fires: the synthetic `data` object (no shipment behind it). */
    syntheticData: jsonb("synthetic_data"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "deliveries_pkey", columns: [t.id, t.createdAt] }),
    index("deliveries_webhook_idx").on(t.webhookId, t.createdAt),
    // Deleting an old event cascades here: without this index each deleted event scans the outbox.
    index("deliveries_event_idx").on(t.eventId),
    // Housekeeping prunes final rows by age; created_at never changes, so this index keeps updates HOT.
    index("deliveries_created_idx").on(t.createdAt),
  ],
);

/**
 * Each webhook's event counter (docs/webhooks.md, "Sequence numbers"): the fan-out upserts it in the transaction
 * that writes the event, so a number is used only when its outbox row commits (a rollback takes both back) and
 * concurrent fan-outs to one webhook queue on this row, never on the webhook's own row (which the outcome
 * record updates).
 */
export const webhookSequences = pgTable("webhook_sequences", {
  webhookId: text("webhook_id")
    .primaryKey()
    .references(() => webhooks.id, { onDelete: "cascade" }),
  lastSequence: bigint("last_sequence", { mode: "number" }).notNull(),
});

/** The outbox's due set: one row per pending delivery, `due_at` = its next attempt; filled by the `deliveries_enqueue` trigger (migration 0005). */
export const deliveryQueue = pgTable(
  "delivery_queue",
  {
    // Removed with its outbox row by the `deliveries_drop_attempts` trigger (migration 0022), not a foreign key.
    deliveryId: text("delivery_id").primaryKey(),
    dueAt: timestamp("due_at", { withTimezone: true }).notNull(),
    /**
     * The outbox row's partition key, copied by the triggers: the claim and every statement after it find the row
     * by (id, created_at), one partition each (docs/webhooks.md, "The worker"). Null only for a row whose
     * delivery is gone; such a row is never claimed.
     */
    createdAt: timestamp("created_at", { withTimezone: true }),
  },
  (t) => [index("delivery_queue_due_idx").on(t.dueAt)],
);

/** Every attempt and redirect hop, for the dashboard (the last 50 per webhook are shown, docs/webhooks.md). */
export const deliveryAttempts = pgTable(
  "delivery_attempts",
  {
    id: text("id").notNull(),
    // Partitioned by week of `started_at` (0022); no foreign keys: removal follows the outbox row through the
    // `deliveries_drop_attempts` trigger (0011). Why: docs/webhooks.md, "The worker".
    deliveryId: text("delivery_id").notNull(),
    webhookId: text("webhook_id").notNull(),
    attempt: integer("attempt").notNull(),
    url: text("url").notNull(),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull(),
    durationMs: integer("duration_ms").notNull(),
    statusCode: integer("status_code"),
    /** Error class when there was no response: `timeout`, `connect`, `tls`, `address_blocked`, `dns`, `redirect_limit`… */
    error: text("error"),
    /** First 2 KB of the response body. */
    responseSnippet: text("response_snippet"),
  },
  // Every delivery writes one row here and an entry into each index: two indexes only. Attempts are read and
  // deleted by delivery id; retention deletes by start time, for which a BRIN index suffices (rows arrive in
  // start-time order; an insert rarely changes its page range's summary).
  (t) => [
    primaryKey({ name: "delivery_attempts_pkey", columns: [t.id, t.startedAt] }),
    index("delivery_attempts_delivery_idx").on(t.deliveryId),
    index("delivery_attempts_started_idx").using("brin", t.startedAt),
  ],
);
