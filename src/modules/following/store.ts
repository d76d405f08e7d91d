/**
 * The shipment store: one row per courier + AWB shared by every account
 * (spec-map Decisions: Following). Every successful fetch — a `/v1/track` lookup, a demo lookup
 * or a scheduled re-check — goes through {@link recordFetch}.
 *
 * Write only what changed. `recordFetch` first reads the row without a lock
 * (one prepared statement) and merges the snapshot into it:
 * - nothing changed and nobody starts following → no transaction, no lock:
 *   a terminal (or unscheduled) shipment is not written at all; a scheduled
 *   one gets ONE statement that updates its fetch time and reschedules its
 *   `recheck_queue` row, guarded on the state it was read in (a concurrent
 *   change makes the guard fail and the fetch takes the full path below);
 * - anything else → the full path: in ONE transaction lock the row, merge
 *   again against the locked row, write the new record, the resulting events
 *   (handed to `opts.onEvents`, the event sink the composition wires: the
 *   webhooks module's outbox fan-out, which also NOTIFYs the delivery worker
 *   on commit), follows and the re-check schedule (the shipment's
 *   `recheck_queue` row: rescheduled, or deleted when the shipment leaves the
 *   schedule). If any part fails, none of it happened.
 */
import { and, eq, sql } from "drizzle-orm";
import type { EventSink } from "../../core-deps.ts";
import type { Db, Tx } from "../../db/client.ts";
import { follows, recheckQueue, shipmentColumns, shipments } from "../../db/schema/index.ts";
import { createFetchRead, type FetchRead } from "../../db/fetch-read.ts";
import { newId } from "../../lib/ids.ts";
import { inSpan } from "../../lib/tracing.ts";
import type { TrackingSnapshot } from "../../domain/checkpoint.ts";
import type { Courier } from "../couriers/catalogue.ts";
import { applySnapshot, type ShipmentRecord } from "./normalise.ts";
import { isTerminal, type ShipmentState, type SubStatus } from "../../domain/states.ts";
import type { EventType } from "../../domain/events.ts";
import { nextRecheckAt } from "../../domain/following.ts";
import { checkpointReasonOf, latestReason } from "../couriers/reasons.ts";
import { countUnmappedReason } from "../metrics/registry.ts";
import type { PredictedDelivery } from "../../domain/predictions.ts";
import { etaMove, writeEvents } from "./history-events.ts";

/** A shipment row as this version reads it ({@link shipmentColumns}: without the deprecated schedule columns). */
export type ShipmentRow = Omit<typeof shipments.$inferSelect, "nextCheckAt" | "leaseUntil" | "leaseOwner" | "recheckFailures">;
/** A stored row as the fast path reads it: with whether the fetching account already follows it and whether it is scheduled. */
export type FetchRow = ShipmentRow & { following: boolean; queued: boolean };

export interface RecordOptions {
  /** The account to make follow the shipment (a `/v1/track` lookup), if any. */
  followAccountId?: string;
  /** Now, ms since the epoch. */
  nowMs: number;
  /** Seconds between scheduled re-checks (±10 % jitter applied here). */
  recheckIntervalSeconds: number;
  /** Random source for jitter, in [0, 1) (tests pass a constant). */
  random?: () => number;
  /** Receives the event written, inside the record transaction (`AppDeps.onEvents`: the webhooks outbox). */
  onEvents: EventSink;
  /** Our predicted delivery of a record (`StatsIndex.predict`, modules/predictions); none when absent. */
  predict?: (courier: string, record: ShipmentRecord) => PredictedDelivery | undefined;
  /** Test hook: runs inside the transaction after the event sink (to prove atomicity). */
  afterOutbox?: (tx: Tx) => Promise<void>;
  /** The fast path's read prepared for pool `db` (`Services.fetchRead`); without it the read is built for this call. */
  fetchRead?: FetchRead;
}

export interface RecordResult {
  shipment: ShipmentRow;
  event: EventType | null;
  /** Rows the event sink wrote for the event (outbox rows). */
  deliveries: number;
  /** True when this call made the account start following. */
  followed: boolean;
}

export function rowToRecord(r: ShipmentRow): ShipmentRecord {
  return {
    state: r.state as ShipmentState,
    subStatus: (r.subStatus as SubStatus | null) ?? null,
    mostRecentStatus: r.mostRecentStatus,
    checkpoints: r.checkpoints,
    originCity: r.originCity,
    destinationCity: r.destinationCity,
    deliveredAt: r.deliveredAt,
    podUrl: r.podUrl,
    additionalInfo: r.additionalInfo,
    estimatedDelivery: r.estimatedDelivery,
  };
}

/** The stored row for courier + AWB, or undefined. */
export async function findShipment(db: Db | Tx, courier: string, trackingNumber: string): Promise<ShipmentRow | undefined> {
  const rows = await db.select(shipmentColumns).from(shipments).where(and(eq(shipments.courier, courier), eq(shipments.trackingNumber, trackingNumber))).limit(1);
  return rows[0];
}

/** What a successful fetch resets on a queue row besides its due time: the failure count and any lease. */
const FETCHED = { failures: 0, leaseUntil: null, leaseOwner: null };

/**
 * Puts shipment `id` (courier slug, AWB) on the re-check schedule at `dueAt`, or moves it there: a
 * successful fetch, so the failure count and any lease go (spec-map Decisions: Re-checks).
 * @throws whatever the database throws.
 */
async function reschedule(tx: Tx, id: string, courier: string, trackingNumber: string, dueAt: Date): Promise<void> {
  await tx
    .insert(recheckQueue)
    .values({ shipmentId: id, courier, trackingNumber, dueAt })
    .onConflictDoUpdate({ target: recheckQueue.shipmentId, set: { dueAt, ...FETCHED } });
}


const sameRecord = (a: ShipmentRecord, b: ShipmentRecord) =>
  a.state === b.state &&
  a.subStatus === b.subStatus &&
  a.mostRecentStatus === b.mostRecentStatus &&
  a.originCity === b.originCity &&
  a.destinationCity === b.destinationCity &&
  a.deliveredAt === b.deliveredAt &&
  a.podUrl === b.podUrl &&
  a.additionalInfo === b.additionalInfo &&
  a.estimatedDelivery === b.estimatedDelivery &&
  a.checkpoints.length === b.checkpoints.length &&
  Bun.deepEquals(a.checkpoints, b.checkpoints);

/**
 * The fast path: the snapshot changes nothing and nobody starts following.
 * @returns the result, or undefined when the full path must run.
 */
async function recordUnchanged(db: Db, courier: Courier, row: FetchRow, snap: TrackingSnapshot, opts: RecordOptions): Promise<RecordResult | undefined> {
  if (row.lastCheckedAt === null) return undefined;
  const prev = rowToRecord(row);
  const { record, event } = applySnapshot(prev, snap);
  if (event || !sameRecord(prev, record)) return undefined;
  const terminal = isTerminal(record.state);
  if (opts.followAccountId && !terminal && courier.follow === "scheduled" && !row.following) return undefined;
  if (row.terminal !== terminal || row.followMode !== courier.follow) return undefined;
  // A row stored before the reason column existed (or read by an older reason table) is brought up to date.
  if (row.reasonCode !== latestReason(courier.slug, record.checkpoints)) return undefined;
  const unchanged = { shipment: row, event: null, deliveries: 0, followed: false } satisfies RecordResult;
  const schedule = !terminal && courier.follow === "scheduled" && row.followers > 0;
  if (!schedule) {
    // Terminal or unscheduled and already off the schedule: nothing to write.
    return row.queued ? undefined : unchanged;
  }
  // One statement: a lookup counts as a re-check and pushes the next one out (spec-map Decisions: Re-checks). The guard
  // makes a concurrent change of state or followers send this fetch down the full path instead; the queue row is
  // written only from the row the guarded update returned, so both change or neither does.
  const now = new Date(opts.nowMs);
  const due = nextRecheckAt(opts.nowMs, opts.recheckIntervalSeconds, opts.random).toISOString();
  const s = db.$with("s").as(
    db
      .update(shipments)
      .set({ lastCheckedAt: now })
      .where(and(eq(shipments.id, row.id), eq(shipments.state, row.state), eq(shipments.followers, row.followers), eq(shipments.terminal, false)))
      .returning(shipmentColumns),
  );
  const q = db.$with("q").as(
    db
      .insert(recheckQueue)
      .select(sql`select id, courier, tracking_number, ${due}::timestamptz, null, null, 0 from s`)
      .onConflictDoUpdate({ target: recheckQueue.shipmentId, set: { dueAt: sql`excluded.due_at`, ...FETCHED } })
      .returning({ id: recheckQueue.shipmentId }),
  );
  const [updated] = await inSpan("db shipment touch", { "db.system.name": "postgresql", "courier.slug": courier.slug }, () => db.with(s, q).select().from(s));
  return updated ? { ...unchanged, shipment: updated } : undefined;
}

/**
 * Stores a successful fetch. See the module comment for the fast path and the transaction.
 * @throws whatever the database throws; nothing is half-written.
 */
export async function recordFetch(db: Db, courier: Courier, trackingNumber: string, snap: TrackingSnapshot, opts: RecordOptions): Promise<RecordResult> {
  const row = (await (opts.fetchRead ?? createFetchRead(db)).execute({ account: opts.followAccountId ?? null, courier: courier.slug, awb: trackingNumber }))[0];
  if (row) {
    const quick = await recordUnchanged(db, courier, row, snap, opts);
    if (quick) return quick;
  }
  return recordChange(db, courier, trackingNumber, snap, opts);
}

/** The full path: see the module comment. */
async function recordChange(db: Db, courier: Courier, trackingNumber: string, snap: TrackingSnapshot, opts: RecordOptions): Promise<RecordResult> {
  const attributes = { "db.system.name": "postgresql", "courier.slug": courier.slug };
  return inSpan("db shipment record", attributes, () => db.transaction(async (tx) => {
    // One statement creates the row if needed, locks it and returns it: ON CONFLICT DO UPDATE takes
    // the row lock like SELECT … FOR UPDATE, so concurrent fetches of one shipment (two replicas, a
    // lookup racing a re-check) serialise here and each compares against the other's result.
    // The no-op `set` leaves the row as it was; it only exists to make RETURNING yield the old row.
    const [before] = await tx
      .insert(shipments)
      .values({ id: newId("shp"), courier: courier.slug, trackingNumber, followMode: courier.follow })
      .onConflictDoUpdate({ target: [shipments.courier, shipments.trackingNumber], set: { followMode: sql`${shipments.followMode}` } })
      .returning(shipmentColumns);
    const id = before!.id;
    const firstSight = before!.lastCheckedAt === null;
    const { record, event } = applySnapshot(firstSight ? undefined : rowToRecord(before!), snap);
    // New checkpoints whose failed-attempt reason no table knows are counted, so the tables can grow (docs/ndr.md).
    const seen = new Set((firstSight ? [] : before!.checkpoints).map((c) => `${c.at}|${c.rawCode ?? ""}|${c.activity}`));
    for (const c of record.checkpoints)
      if (!seen.has(`${c.at}|${c.rawCode ?? ""}|${c.activity}`) && !checkpointReasonOf(courier.slug, c).mapped) countUnmappedReason(courier.slug);
    const now = new Date(opts.nowMs);
    const terminal = isTerminal(record.state);

    const predicted = opts.predict?.(courier.slug, record);
    const eta = etaMove(firstSight ? undefined : before, record, predicted);
    // Fan out to the accounts already following; an account that starts following with this very
    // lookup has the change in its response and is not notified of it again.
    const deliveries = await writeEvents(tx, id, record, event, eta, opts.nowMs, opts.onEvents);
    if ((event || eta) && opts.afterOutbox) await opts.afterOutbox(tx);

    let followed = false;
    if (opts.followAccountId && !terminal && courier.follow === "scheduled") {
      const ins = await tx.insert(follows).values({ accountId: opts.followAccountId, shipmentId: id }).onConflictDoNothing().returning({ a: follows.accountId });
      followed = ins.length > 0;
    }
    const followers = before!.followers + (followed ? 1 : 0);
    // Terminal or lookup-only shipments are never scheduled; a lookup counts as a re-check and pushes the next one out.
    const schedule = !terminal && courier.follow === "scheduled" && followers > 0;
    const [shipment] = await tx
      .update(shipments)
      .set({
        state: record.state,
        subStatus: record.subStatus,
        mostRecentStatus: record.mostRecentStatus,
        checkpoints: record.checkpoints,
        checkpointCount: record.checkpoints.length,
        originCity: record.originCity,
        destinationCity: record.destinationCity,
        deliveredAt: record.deliveredAt,
        podUrl: record.podUrl,
        additionalInfo: record.additionalInfo,
        estimatedDelivery: record.estimatedDelivery,
        predictedDelivery: predicted ?? null,
        // A new newest checkpoint ends a stall (docs/predictions.md); otherwise the flag stays as it was.
        ...(record.checkpoints[0]?.at !== before!.checkpoints[0]?.at ? { stalledAt: null } : {}),
        // The list's `reason_code` and its filter read this column (docs/ndr.md).
        reasonCode: latestReason(courier.slug, record.checkpoints),
        terminal,
        followers,
        followMode: courier.follow,
        lastCheckedAt: now,
        updatedAt: now,
      })
      .where(eq(shipments.id, id))
      .returning(shipmentColumns);
    if (schedule) await reschedule(tx, id, courier.slug, trackingNumber, nextRecheckAt(opts.nowMs, opts.recheckIntervalSeconds, opts.random));
    else await tx.delete(recheckQueue).where(eq(recheckQueue.shipmentId, id));
    return { shipment: shipment!, event, deliveries, followed };
  }));
}
