/**
 * Shipments (one row per courier + AWB, shared by every account), follows,
 * and the events a re-check produces (CONTRACT section 6).
 */
import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import type { RawCheckpoint } from "../../modules/couriers/adapters/types.ts";
import { accounts } from "./accounts.ts";

/**
 * A checkpoint as stored in `shipments.checkpoints`: exactly the adapter's
 * normalised checkpoint, raw courier code and text kept (issue 3 item 1).
 */
export type StoredCheckpoint = RawCheckpoint;

export const shipments = pgTable(
  "shipments",
  {
    id: text("id").primaryKey(),
    courier: text("courier").notNull(),
    trackingNumber: text("tracking_number").notNull(),
    state: text("state").notNull().default("pending"),
    subStatus: text("sub_status"),
    /** Service's own short label (CONTRACT 1 MostRecentStatus). */
    mostRecentStatus: text("most_recent_status").notNull().default("Order information received"),
    checkpoints: jsonb("checkpoints").$type<StoredCheckpoint[]>().notNull().default(sql`'[]'::jsonb`),
    checkpointCount: integer("checkpoint_count").notNull().default(0),
    originCity: text("origin_city"),
    destinationCity: text("destination_city"),
    deliveredAt: text("delivered_at"),
    podUrl: text("pod_url"),
    additionalInfo: text("additional_info"),
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
  ],
);

export const follows = pgTable(
  "follows",
  {
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    shipmentId: text("shipment_id").notNull().references(() => shipments.id, { onDelete: "cascade" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.shipmentId] }), index("follows_shipment_idx").on(t.shipmentId)],
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
