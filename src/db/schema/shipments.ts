/**
 * Shipments (one row per courier + AWB, shared by every account), follows,
 * and the events a re-check produces (spec: Events; docs/spec-map.md, "Decisions", following and outbox).
 */
import { sql } from "drizzle-orm";
import { boolean, date, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import type { StoredCheckpoint } from "../../domain/checkpoint.ts";
import { accounts } from "./accounts.ts";


export const shipments = pgTable(
  "shipments",
  {
    id: text("id").primaryKey(),
    courier: text("courier").notNull(),
    trackingNumber: text("tracking_number").notNull(),
    state: text("state").notNull().default("pending"),
    subStatus: text("sub_status"),
    /** Service's own short label for `MostRecentStatus` (src/domain/states.ts). */
    mostRecentStatus: text("most_recent_status").notNull().default("Order information received"),
    checkpoints: jsonb("checkpoints").$type<StoredCheckpoint[]>().notNull().default(sql`'[]'::jsonb`),
    checkpointCount: integer("checkpoint_count").notNull().default(0),
    originCity: text("origin_city"),
    destinationCity: text("destination_city"),
    deliveredAt: text("delivered_at"),
    podUrl: text("pod_url"),
    additionalInfo: text("additional_info"),
    /** The courier's estimated delivery date (EDD) from its latest answer, a calendar date in its zone; null: none given. */
    estimatedDelivery: date("estimated_delivery", { mode: "string" }),
    /** Follow mode of the courier at the time of storage: `scheduled` | `lookup`. */
    followMode: text("follow_mode").notNull().default("scheduled"),
    terminal: boolean("terminal").notNull().default(false),
    /** Number of accounts following; 0 = nobody, never re-checked. */
    followers: integer("followers").notNull().default(0),
    lastCheckedAt: timestamp("last_checked_at", { withTimezone: true }),
    /** Next scheduled re-check; null = not scheduled (terminal, lookup-only or unfollowed). */
    nextCheckAt: timestamp("next_check_at", { withTimezone: true }),
    /** Claim lease for the re-check job; expires if the claiming process dies. */
    leaseUntil: timestamp("lease_until", { withTimezone: true }),
    leaseOwner: text("lease_owner"),
    /** Consecutive transient courier failures on re-check, for back-off. */
    recheckFailures: integer("recheck_failures").notNull().default(0),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("shipments_courier_awb_key").on(t.courier, t.trackingNumber),
    // Partial index: the re-check claim scans only followed, non-terminal shipments in due order,
    // so claiming 1,000 rows costs the same with 10k or 1M rows in the table.
    index("shipments_due_idx").on(t.nextCheckAt).where(sql`next_check_at is not null`),
    // The same rows by 15-minute due bucket: equal keys sit in storage order, so a claim that
    // drains an overdue backlog touches a few pages, not one page per row (modules/tracking/claims.ts).
    // The table is created with fillfactor 90 (migration 0005) so the claim's lease stamp stays a HOT update.
    index("shipments_due_bucket_idx")
      .on(sql`date_bin('15 minutes', ${t.nextCheckAt}, timestamptz '2000-01-01 00:00:00+00')`)
      .where(sql`next_check_at is not null`),
  ],
);

export const follows = pgTable(
  "follows",
  {
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    shipmentId: text("shipment_id").notNull().references(() => shipments.id, { onDelete: "cascade" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.shipmentId] }),
    index("follows_shipment_idx").on(t.shipmentId),
    // GET /v1/shipments pages an account's follows newest first.
    index("follows_account_created_idx").on(t.accountId, t.createdAt, t.shipmentId),
  ],
);

/** One event per detected change of one shipment (spec: Events). */
export const events = pgTable(
  "events",
  {
    id: text("id").primaryKey(),
    shipmentId: text("shipment_id").notNull().references(() => shipments.id, { onDelete: "cascade" }),
    /** `tracking.updated` | `tracking.in_transit` | … */
    type: text("type").notNull(),
    /** Webhook spelling of the state at the change (spec: data.status). */
    status: text("status").notNull(),
    /** Fixed per event, UTC, to the second (spec: enqueued_at). */
    enqueuedAt: timestamp("enqueued_at", { withTimezone: true }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("events_shipment_idx").on(t.shipmentId), index("events_created_idx").on(t.createdAt)],
);
