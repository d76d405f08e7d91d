/**
 * Shipments (one row per courier + AWB, shared by every account), follows,
 * and the events a re-check produces (spec: Events; docs/spec-map.md, "Decisions", following and outbox).
 */
import { getTableColumns, sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  date,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import type { StoredCheckpoint } from "../../domain/checkpoint.ts";
import type { PredictedDelivery } from "../../domain/predictions.ts";
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
    /**
     * The history as release 1.0.0 stores it, newest first. Written only while an older release may run
     * (layout level 2, docs/releases.md); read through `shipment_history` (docs/performance.md, "History appended").
     */
    checkpoints: jsonb("checkpoints").$type<StoredCheckpoint[]>().notNull().default(sql`'[]'::jsonb`),
    checkpointCount: integer("checkpoint_count").notNull().default(0),
    /** The newest 1–40 checkpoints (compact encoding, following/history.ts), in the row that a change rewrites anyway. */
    historyTail: jsonb("history_tail").$type<unknown[]>(),
    /** Ids of the sealed `shipment_checkpoint_chunks` holding the older checkpoints, oldest chunk first; null: none. */
    historyChunks: bigint("history_chunks", { mode: "number" }).array(),
    /** `updated_at` of the write that stored the tail and chunks: otherwise `checkpoints` is the history (an older release wrote it). */
    historyAt: timestamp("history_at", { withTimezone: true }),
    originCity: text("origin_city"),
    destinationCity: text("destination_city"),
    /** Indian 6-digit PIN of origin and destination, from the courier's answer or given on follow; null: unknown (docs/predictions.md). */
    originPincode: text("origin_pincode"),
    destinationPincode: text("destination_pincode"),
    deliveredAt: text("delivered_at"),
    podUrl: text("pod_url"),
    additionalInfo: text("additional_info"),
    /** The courier's estimated delivery date (EDD) from its latest answer, a calendar date in its zone; null: none given. */
    estimatedDelivery: date("estimated_delivery", { mode: "string" }),
    /** Failed-attempt (NDR) reason of the newest checkpoint carrying one (`REASON_CODES`, docs/ndr.md), or null. */
    reasonCode: text("reason_code"),
    /** When found stalled (docs/predictions.md), or null; a new checkpoint clears it. */
    stalledAt: timestamp("stalled_at", { withTimezone: true }),
    /** Our predicted delivery when the record was last stored (docs/predictions.md), or null: what payloads and the list show. */
    predictedDelivery: jsonb("predicted_delivery").$type<PredictedDelivery>(),
    /** Follow mode of the courier at the time of storage: `scheduled` | `lookup`. */
    followMode: text("follow_mode").notNull().default("scheduled"),
    terminal: boolean("terminal").notNull().default(false),
    /** Number of accounts following; 0 = nobody, never re-checked. */
    followers: integer("followers").notNull().default(0),
    lastCheckedAt: timestamp("last_checked_at", { withTimezone: true }),
    // The schedule before `recheck_queue` (0010): unused, kept for rolling upgrades (docs/deployment.md, "Migrations on deploy").
    /** @deprecated the re-check schedule is `recheck_queue.due_at`. */
    nextCheckAt: timestamp("next_check_at", { withTimezone: true }),
    /** @deprecated `recheck_queue.lease_until`. */
    leaseUntil: timestamp("lease_until", { withTimezone: true }),
    /** @deprecated `recheck_queue.lease_owner`. */
    leaseOwner: text("lease_owner"),
    /** @deprecated `recheck_queue.failures`. */
    recheckFailures: integer("recheck_failures").notNull().default(0),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("shipments_courier_awb_key").on(t.courier, t.trackingNumber),
    // GET /v1/shipments?reason_code=: most shipments carry none, so only those that do are indexed.
    index("shipments_reason_code_idx").on(t.reasonCode).where(sql`reason_code is not null`),
    // The previous version's due indexes (see the deprecated columns above).
    index("shipments_due_idx").on(t.nextCheckAt).where(sql`next_check_at is not null`),
    index("shipments_due_bucket_idx")
      .on(sql`date_bin('15 minutes', ${t.nextCheckAt}, timestamptz '2000-01-01 00:00:00+00')`)
      .where(sql`next_check_at is not null`),
  ],
);

/**
 * The re-check schedule: one narrow row per shipment re-checked on a schedule (spec "What the service does").
 * Why apart from `shipments`, fillfactor 70, no index on the lease: docs/rechecks.md, "The schedule is its own table".
 */
export const recheckQueue = pgTable(
  "recheck_queue",
  {
    shipmentId: text("shipment_id")
      .primaryKey()
      .references(() => shipments.id, { onDelete: "cascade" }),
    courier: text("courier").notNull(),
    trackingNumber: text("tracking_number").notNull(),
    /** Next scheduled re-check. A claim leaves it as it was; the lease hides the row meanwhile. */
    dueAt: timestamp("due_at", { withTimezone: true }).notNull(),
    /** Claim lease for the re-check job; expires if the claiming process dies. */
    leaseUntil: timestamp("lease_until", { withTimezone: true }),
    leaseOwner: text("lease_owner"),
    /** Consecutive failed re-checks, for back-off; 0 after a successful fetch. */
    failures: integer("failures").notNull().default(0),
  },
  (t) => [
    // The current 15-minute bucket in exact due order; countDue and the metrics scrape.
    index("recheck_queue_due_idx").on(t.dueAt),
    // The same rows by 15-minute due bucket: equal keys sit in storage order, so a claim that
    // drains an overdue backlog touches a few pages, not one page per row (modules/following/claims.ts).
    // Two grids, the second offset by half a bucket: a claim walks the one in which the oldest due row
    // sits in the first half of its bucket, so that bucket holds at least 7.5 minutes of due times.
    index("recheck_queue_due_bucket_idx").on(
      sql`date_bin('15 minutes', ${t.dueAt}, timestamptz '2000-01-01 00:00:00+00')`,
    ),
    index("recheck_queue_due_bucket_offset_idx").on(
      sql`date_bin('15 minutes', ${t.dueAt}, timestamptz '2000-01-01 00:07:30+00')`,
    ),
  ],
);

/**
 * Sealed chunks of a shipment's history: 40 checkpoints each (compact encoding, newest first), written once and
 * never updated; found through `shipments.history_chunks` (docs/performance.md, "History appended").
 */
export const shipmentCheckpointChunks = pgTable("shipment_checkpoint_chunks", {
  id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
  shipmentId: text("shipment_id").notNull(),
  checkpoints: jsonb("checkpoints").$type<unknown[]>().notNull(),
});

/**
 * The re-check schedule from layout level 2 (docs/rechecks.md, "Re-checks in chunks"): one row per scheduled
 * shipment naming its chunk; a no-change re-check writes nothing here. `due_at` is set only while the shipment is
 * off its chunk's time (first check after a follow, a failure's back-off, moved from `recheck_queue`). No foreign
 * key: its check on insert would lock (and so write) the shipment row; the follow module deletes rows with it.
 */
export const recheckSchedule = pgTable(
  "recheck_schedule",
  {
    shipmentId: text("shipment_id").primaryKey(),
    courier: text("courier").notNull(),
    trackingNumber: text("tracking_number").notNull(),
    /** The chunk (`recheck_chunks.id`) whose runs re-check it while `due_at` is null. */
    chunkId: bigint("chunk_id", { mode: "number" }),
    /** Its own due time, which wins over the chunk's; null when the chunk's applies. */
    dueAt: timestamp("due_at", { withTimezone: true }),
    /** When the row was last written by a fetch (a lookup, or a check off its chunk's time). */
    checkedAt: timestamp("checked_at", { withTimezone: true }),
    leaseUntil: timestamp("lease_until", { withTimezone: true }),
    leaseOwner: text("lease_owner"),
    failures: integer("failures").notNull().default(0),
  },
  (t) => [
    // A chunk run walks its members in shipment order from its cursor.
    index("recheck_schedule_chunk_idx").on(t.chunkId, t.shipmentId),
    index("recheck_schedule_due_idx").on(t.dueAt).where(sql`${t.dueAt} is not null`),
  ],
);

/**
 * Chunks of the re-check schedule (docs/rechecks.md, "Re-checks in chunks"): one row per group of one courier's
 * shipments re-checked together; a run leases the chunk, walks its members and moves `due_at` one interval on.
 */
export const recheckChunks = pgTable(
  "recheck_chunks",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    courier: text("courier").notNull(),
    dueAt: timestamp("due_at", { withTimezone: true }).notNull(),
    leaseUntil: timestamp("lease_until", { withTimezone: true }),
    leaseOwner: text("lease_owner"),
    /** The last member (`shipment_id`) the current run finished, so that a run taken over resumes after it. */
    cursor: text("cursor"),
    /** When the current run began; null between runs. */
    startedAt: timestamp("started_at", { withTimezone: true }),
    /** When the last completed run began: its members' check time. */
    lastRunAt: timestamp("last_run_at", { withTimezone: true }),
  },
  (t) => [index("recheck_chunks_due_idx").on(t.dueAt), index("recheck_chunks_courier_due_idx").on(t.courier, t.dueAt)],
);

/**
 * The columns of `shipments` this version reads: all but the four deprecated schedule columns, so that no
 * lookup pays for columns nothing uses. Select and return shipment rows with these.
 */
const {
  nextCheckAt: _nextCheckAt,
  leaseUntil: _leaseUntil,
  leaseOwner: _leaseOwner,
  recheckFailures: _recheckFailures,
  historyTail: _historyTail,
  ...current
} = getTableColumns(shipments);
export const shipmentColumns = {
  ...current,
  // The whole history, whichever layout holds it (migration 0027); the unaliased table is the row.
  checkpoints: sql<StoredCheckpoint[]>`shipment_history(${shipments})`.mapWith(current.checkpoints).as("checkpoints"),
  historyTailLength: sql<number>`coalesce(jsonb_array_length(${shipments.historyTail}), 0)`
    .mapWith(Number)
    .as("history_tail_length"),
};

export const follows = pgTable(
  "follows",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    shipmentId: text("shipment_id")
      .notNull()
      .references(() => shipments.id, { onDelete: "cascade" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /** The merchant's own reference (order id), 1–128 characters, or null (docs/shipments.md, "Reference and metadata"). */
    reference: text("reference"),
    /** The merchant's own string key/value pairs for this follow, at most 20 keys; `{}` when none. */
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default(sql`'{}'::jsonb`),
    /** Random id of the follow's public link (docs/tracking-page.md); the token is derived from it, never stored. Null: not issued yet. */
    publicLinkNonce: text("public_link_nonce"),
    /** SHA-256 hex of the public link's token: the page's lookup key. A new nonce (rotate) replaces it. */
    publicTokenHash: text("public_token_hash"),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.shipmentId] }),
    // GET /v1/shipments?reference= (exact, per account).
    index("follows_account_reference_idx").on(t.accountId, t.reference).where(sql`reference is not null`),
    index("follows_shipment_idx").on(t.shipmentId),
    // GET /v1/shipments pages an account's follows newest first.
    index("follows_account_created_idx").on(t.accountId, t.createdAt, t.shipmentId),
    uniqueIndex("follows_public_token_hash_key").on(t.publicTokenHash),
  ],
);

/**
 * One event per detected change of one shipment (spec: Events). Partitioned by week of `created_at` (migration
 * 0022, docs/capacity.md "Partitioned history"): the key is (id, created_at) and no foreign key points here.
 */
export const events = pgTable(
  "events",
  {
    id: text("id").notNull(),
    shipmentId: text("shipment_id")
      .notNull()
      .references(() => shipments.id, { onDelete: "cascade" }),
    /** `tracking.updated` | `tracking.in_transit` | … */
    type: text("type").notNull(),
    /** Webhook spelling of the state at the change (spec: data.status). */
    status: text("status").notNull(),
    /** `tracking.eta_changed` only: the expected delivery day before and after, `YYYY-MM-DD` (docs/predictions.md). */
    etaPrevious: date("eta_previous", { mode: "string" }),
    etaNew: date("eta_new", { mode: "string" }),
    /** `tracking.action_updated` only: the NDR action (`shipment_actions.id`, docs/ndr-actions.md). */
    actionId: text("action_id"),
    /** Fixed per event, UTC, to the second (spec: enqueued_at). */
    enqueuedAt: timestamp("enqueued_at", { withTimezone: true }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /** W3C `traceparent` of the span that wrote the event, when traces are on: its deliveries join that trace. */
    traceParent: text("trace_parent"),
  },
  (t) => [
    primaryKey({ name: "events_pkey", columns: [t.id, t.createdAt] }),
    index("events_shipment_idx").on(t.shipmentId),
    index("events_created_idx").on(t.createdAt),
  ],
);
