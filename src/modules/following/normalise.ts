/**
 * From a courier snapshot to the stored shipment record, and from a stored
 * record plus a new snapshot to the merged record and the event it yields.
 *
 * Rules (spec: Events rules 1–2; docs/spec-map.md, "Decisions", transitions):
 * - checkpoints are the union of everything known (the webhook payload carries
 *   "the full known history"), de-duplicated by instant + code + text +
 *   location, newest first;
 * - the shipment's state is the state of its newest checkpoint (by UTC
 *   instant), or the courier's shipment-level status when it is newer or
 *   there are no checkpoints; a terminal state, once seen, stays unless the
 *   courier later shows a newer non-terminal checkpoint;
 * - a change to a state with its own event yields that event; otherwise more
 *   checkpoints than before yields `tracking.updated`; never both;
 * - the estimated delivery date is the courier's latest answer's (none when
 *   that answer has none); a change of it alone yields none of the spec's
 *   events — those are state changes and new checkpoints — but it is stored and
 *   shown, and store.ts adds `tracking.eta_changed` (docs/predictions.md).
 */
import type { RawCheckpoint, StoredCheckpoint, TrackingSnapshot } from "../../domain/checkpoint.ts";
import { eventForState, type EventType } from "../../domain/events.ts";
import { isTerminal, mostRecentStatus, type ShipmentState, type SubStatus } from "../../domain/states.ts";

export interface ShipmentRecord {
  state: ShipmentState;
  subStatus: SubStatus | null;
  mostRecentStatus: string;
  checkpoints: StoredCheckpoint[];
  originCity: string | null;
  destinationCity: string | null;
  /** Courier-local date of the delivery, `YYYY-MM-DD` (webhook `data.delivered_date`), or null. */
  deliveredAt: string | null;
  podUrl: string | null;
  additionalInfo: string | null;
  /** The courier's estimated delivery date, `YYYY-MM-DD` in its zone, or null. */
  estimatedDelivery: string | null;
}

const keyOf = (c: StoredCheckpoint) => `${c.at}|${c.rawCode ?? ""}|${c.activity}|${c.location}`;

function toStored(c: RawCheckpoint): StoredCheckpoint {
  return {
    state: c.state,
    subStatus: c.subStatus,
    activity: c.activity.slice(0, 500),
    location: c.location.slice(0, 200),
    localDate: c.localDate,
    localTime: c.localTime,
    at: c.at,
    rawCode: c.rawCode,
    rawStatus: c.rawStatus,
    remark: c.remark,
  };
}

/** Union of two checkpoint lists, de-duplicated, newest first (ties keep the courier's later entry first). */
export function mergeCheckpoints(known: readonly StoredCheckpoint[], incoming: readonly StoredCheckpoint[]): StoredCheckpoint[] {
  const byKey = new Map<string, { c: StoredCheckpoint; i: number }>();
  let i = 0;
  for (const c of [...known, ...incoming]) byKey.set(keyOf(c), { c, i: i++ });
  return [...byKey.values()].sort((a, b) => (a.c.at === b.c.at ? b.i - a.i : a.c.at < b.c.at ? 1 : -1)).map((x) => x.c);
}

/**
 * Merges a fresh snapshot into the stored record (or into nothing, on first sight).
 * @returns the new record and the event the change yields (null: no event).
 */
export function applySnapshot(prev: ShipmentRecord | undefined, snap: TrackingSnapshot): { record: ShipmentRecord; event: EventType | null } {
  const checkpoints = mergeCheckpoints(prev?.checkpoints ?? [], snap.checkpoints.map(toStored));
  const newest = checkpoints[0];
  let state = (newest?.state ?? "pending") as ShipmentState;
  let sub: SubStatus | null = (newest?.subStatus as SubStatus | null) ?? null;
  if (snap.summary && (!newest || (snap.summary.at && snap.summary.at > newest.at))) {
    state = snap.summary.state;
    sub = snap.summary.subStatus;
  }
  // A terminal state stays unless the courier shows a checkpoint newer than the one that made it terminal.
  if (prev && isTerminal(prev.state) && !isTerminal(state)) {
    const prevNewest = prev.checkpoints[0]?.at ?? "";
    if (!newest || newest.at <= prevNewest) {
      state = prev.state;
      sub = prev.subStatus;
    }
  }
  const delivered = state === "delivered" ? (checkpoints.find((c) => c.state === "delivered") ?? newest) : undefined;
  const record: ShipmentRecord = {
    state,
    subStatus: sub,
    mostRecentStatus: mostRecentStatus(state, sub),
    checkpoints,
    originCity: snap.originCity ?? prev?.originCity ?? null,
    destinationCity: snap.destinationCity ?? prev?.destinationCity ?? null,
    // The courier's local date, like every checkpoint `Date`: a UTC date could be a day off near midnight.
    deliveredAt: delivered ? delivered.localDate : null,
    podUrl: snap.podUrl ?? (state === "delivered" ? (prev?.podUrl ?? null) : null),
    additionalInfo: snap.remark ?? newest?.remark ?? null,
    estimatedDelivery: snap.estimatedDelivery ?? null,
  };
  if (!prev) return { record, event: null };
  let event: EventType | null = null;
  if (state !== prev.state) event = eventForState(state);
  if (!event && checkpoints.length > prev.checkpoints.length) event = "tracking.updated";
  return { record, event };
}
