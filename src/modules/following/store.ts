/**
 * The shipment store: one row per courier + AWB shared by every account (spec-map Decisions: Following); every
 * fetch goes through {@link recordFetch}, which writes only what changed (docs/performance.md).
 */
import { courierPincodes } from "../../domain/places.ts";
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
import { writeHistory } from "./history.ts";
import { legacyLayout } from "./layout.ts";
import { FETCHED, moveToChunk, reschedule, unscheduleIn } from "./schedule.ts";
import { defined } from "../../lib/defined.ts";

/** A shipment row as {@link shipmentColumns} reads it: the whole history in `checkpoints`, the tail's length. */
export type ShipmentRow = Omit<
  typeof shipments.$inferSelect,
  "nextCheckAt" | "leaseUntil" | "leaseOwner" | "recheckFailures" | "historyTail"
> & { historyTailLength: number };
/** A stored row as the fast path reads it, with whether the account follows it and whether it is scheduled. */
type FetchRow = ShipmentRow & { following: boolean; queued: boolean };

export interface RecordOptions {
  /** The account to make follow the shipment (a `/v1/track` lookup), if any. */
  followAccountId?: string;
  nowMs: number;
  /** Seconds between scheduled re-checks (±10 % jitter applied here). */
  recheckIntervalSeconds: number;
  random?: () => number;
  /** Receives the event written, inside the record transaction (`AppDeps.onEvents`: the webhooks outbox). */
  onEvents: EventSink;
  predict?: (courier: string, record: ShipmentRecord) => PredictedDelivery | undefined;
  /** Test hook: runs inside the transaction after the event sink (to prove atomicity). */
  afterOutbox?: (tx: Tx) => Promise<void>;
  fetchRead?: FetchRead;
  /** A run of the shipment's chunk re-checks it: its next check is the chunk's, so nothing is scheduled here. */
  inChunk?: boolean;
}

export interface RecordResult {
  shipment: ShipmentRow;
  event: EventType | null;
  deliveries: number;
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
export async function findShipment(
  db: Db | Tx,
  courier: string,
  trackingNumber: string,
): Promise<ShipmentRow | undefined> {
  const rows = await db
    .select(shipmentColumns)
    .from(shipments)
    .where(and(eq(shipments.courier, courier), eq(shipments.trackingNumber, trackingNumber)))
    .limit(1);
  return rows[0];
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

/** The fast path (nothing changes, nobody starts following); undefined when the full path must run. */
async function recordUnchanged(
  db: Db,
  courier: Courier,
  row: FetchRow,
  snap: TrackingSnapshot,
  opts: RecordOptions,
): Promise<RecordResult | undefined> {
  if (row.lastCheckedAt === null) return undefined;
  const prev = rowToRecord(row);
  const { record, event } = applySnapshot(prev, snap);
  if (event || !sameRecord(prev, record)) return undefined;
  const terminal = isTerminal(record.state);
  if (opts.followAccountId && !terminal && courier.follow === "scheduled" && !row.following) return undefined;
  if (row.terminal !== terminal || row.followMode !== courier.follow) return undefined;
  // A row stored by an older reason table is brought up to date.
  if (row.reasonCode !== latestReason(courier.slug, record.checkpoints)) return undefined;
  const unchanged = { shipment: row, event: null, deliveries: 0, followed: false } satisfies RecordResult;
  const schedule = !terminal && courier.follow === "scheduled" && row.followers > 0;
  if (!schedule) return row.queued ? undefined : unchanged;
  const now = new Date(opts.nowMs);
  const due = nextRecheckAt(opts.nowMs, opts.recheckIntervalSeconds, opts.random).toISOString();
  if (!(await legacyLayout(db))) {
    const checked = { ...unchanged, shipment: { ...row, lastCheckedAt: now } };
    // A chunk member checked by its chunk's run writes nothing (docs/rechecks.md, "Re-checks in chunks").
    if (!row.queued || opts.inChunk) return row.queued ? checked : undefined;
    const attrs = { "db.system.name": "postgresql", "courier.slug": courier.slug };
    const move = () => moveToChunk(db, row, new Date(due), now, opts.recheckIntervalSeconds * 1000);
    return (await inSpan("db schedule move", attrs, move)) ? checked : undefined;
  }
  // One statement; a concurrent change fails the guard (full path), and the queue row moves only with the shipment's.
  const s = db.$with("s").as(
    db
      .update(shipments)
      .set({ lastCheckedAt: now })
      .where(
        and(
          eq(shipments.id, row.id),
          eq(shipments.state, row.state),
          eq(shipments.followers, row.followers),
          eq(shipments.terminal, false),
        ),
      )
      .returning(shipmentColumns),
  );
  const q = db.$with("q").as(
    db
      .insert(recheckQueue)
      .select(sql`select id, courier, tracking_number, ${due}::timestamptz, null, null, 0 from s`)
      .onConflictDoUpdate({ target: recheckQueue.shipmentId, set: { dueAt: sql`excluded.due_at`, ...FETCHED } })
      .returning({ id: recheckQueue.shipmentId }),
  );
  const [updated] = await inSpan(
    "db shipment touch",
    { "db.system.name": "postgresql", "courier.slug": courier.slug },
    () => db.with(s, q).select().from(s),
  );
  return updated ? { ...unchanged, shipment: updated } : undefined;
}

/** Stores a successful fetch (fast path, else one transaction). @throws whatever the database throws; nothing is half-written. */
export async function recordFetch(
  db: Db,
  courier: Courier,
  trackingNumber: string,
  snap: TrackingSnapshot,
  opts: RecordOptions,
): Promise<RecordResult> {
  const row = (
    await (opts.fetchRead ?? createFetchRead(db)).execute({
      account: opts.followAccountId ?? null,
      courier: courier.slug,
      awb: trackingNumber,
    })
  )[0];
  if (row) {
    const quick = await recordUnchanged(db, courier, row, snap, opts);
    if (quick) return quick;
  }
  return recordChange(db, courier, trackingNumber, snap, opts);
}

/**
 * Locks the row (SELECT … FOR UPDATE, which writes no row version), creating it first when missing; a creation
 * that loses a race to another transaction's locks the winner's row.
 */
async function lockShipment(tx: Tx, courier: Courier, trackingNumber: string): Promise<ShipmentRow> {
  const locked = () =>
    tx
      .select(shipmentColumns)
      .from(shipments)
      .where(and(eq(shipments.courier, courier.slug), eq(shipments.trackingNumber, trackingNumber)))
      .for("update");
  const [found] = await locked();
  if (found) return found;
  const [created] = await tx
    .insert(shipments)
    .values({ id: newId("shp"), courier: courier.slug, trackingNumber, followMode: courier.follow })
    .onConflictDoNothing({ target: [shipments.courier, shipments.trackingNumber] })
    .returning(shipmentColumns);
  return created ?? defined((await locked())[0], `shipment ${courier.slug} ${trackingNumber}`);
}

/** Counts new checkpoints whose failed-attempt reason no table knows, so the tables can grow (docs/ndr.md). */
function countUnmapped(courier: Courier, before: ShipmentRow | undefined, record: ShipmentRecord): void {
  const seen = new Set((before?.checkpoints ?? []).map((c) => `${c.at}|${c.rawCode ?? ""}|${c.activity}`));
  for (const c of record.checkpoints)
    if (!seen.has(`${c.at}|${c.rawCode ?? ""}|${c.activity}`) && !checkpointReasonOf(courier.slug, c).mapped)
      countUnmappedReason(courier.slug);
}

function recordColumns(
  courier: Courier,
  record: ShipmentRecord,
  before: ShipmentRow,
  predicted: PredictedDelivery | undefined,
) {
  return {
    state: record.state,
    subStatus: record.subStatus,
    mostRecentStatus: record.mostRecentStatus,
    originCity: record.originCity,
    destinationCity: record.destinationCity,
    deliveredAt: record.deliveredAt,
    podUrl: record.podUrl,
    additionalInfo: record.additionalInfo,
    estimatedDelivery: record.estimatedDelivery,
    predictedDelivery: predicted ?? null,
    // A new newest checkpoint ends a stall (docs/predictions.md).
    ...(record.checkpoints[0]?.at !== before.checkpoints[0]?.at ? { stalledAt: null } : {}),
    reasonCode: latestReason(courier.slug, record.checkpoints),
  };
}

/** The full path: record, events, follows and schedule in one transaction (docs/performance.md). */
async function recordChange(
  db: Db,
  courier: Courier,
  trackingNumber: string,
  snap: TrackingSnapshot,
  opts: RecordOptions,
): Promise<RecordResult> {
  const attributes = { "db.system.name": "postgresql", "courier.slug": courier.slug };
  const legacy = await legacyLayout(db);
  return inSpan("db shipment record", attributes, () =>
    db.transaction(async (tx) => {
      const before = await lockShipment(tx, courier, trackingNumber);
      const id = before.id;
      const prior = before.lastCheckedAt === null ? undefined : before;
      const { record, event } = applySnapshot(prior && rowToRecord(prior), snap);
      countUnmapped(courier, prior, record);
      const now = new Date(opts.nowMs);
      const terminal = isTerminal(record.state);
      const pins = { originPincode: before.originPincode, destinationPincode: before.destinationPincode };
      const predicted = opts.predict?.(courier.slug, { ...record, ...pins, ...courierPincodes(snap) });
      const eta = etaMove(prior, record, predicted);
      // Only accounts already following are notified: one that starts following now has the change in its response.
      const deliveries = await writeEvents(tx, id, record, event, eta, opts.nowMs, opts.onEvents);
      if ((event || eta) && opts.afterOutbox) await opts.afterOutbox(tx);
      let followed = false;
      if (opts.followAccountId && !terminal && courier.follow === "scheduled") {
        const ins = await tx
          .insert(follows)
          .values({ accountId: opts.followAccountId, shipmentId: id })
          .onConflictDoNothing()
          .returning({ a: follows.accountId });
        followed = ins.length > 0;
      }
      const followers = before.followers + (followed ? 1 : 0);
      const [shipment] = await tx
        .update(shipments)
        .set({
          ...recordColumns(courier, record, before, predicted),
          ...(await writeHistory(tx, before, record, legacy, now)),
          ...courierPincodes(snap),
          terminal,
          followers,
          followMode: courier.follow,
          lastCheckedAt: now,
          updatedAt: now,
        })
        .where(eq(shipments.id, id))
        .returning(shipmentColumns);
      // Terminal or lookup-only shipments are never scheduled; a lookup counts as a re-check.
      if (!terminal && courier.follow === "scheduled" && followers > 0)
        await reschedule(
          tx,
          legacy,
          { id, courier: courier.slug, trackingNumber },
          nextRecheckAt(opts.nowMs, opts.recheckIntervalSeconds, opts.random),
          now,
          { intervalMs: opts.recheckIntervalSeconds * 1000, keep: opts.inChunk },
        );
      else await unscheduleIn(tx, legacy, id);
      return { shipment: defined(shipment, `shipment ${id}`), event, deliveries, followed };
    }),
  );
}
