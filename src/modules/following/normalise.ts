/**
 * Snapshot → stored record, and stored record + snapshot → merged record and its event (spec: Events rules 1–2;
 * docs/spec-map.md#states-and-transitions). Checkpoints: union, de-duplicated by instant + code + text + location,
 * newest first. State: the newest checkpoint's, or the courier's summary when newer; terminal stays unless a newer
 * non-terminal checkpoint. A state with its own event wins over `tracking.updated`; an EDD change alone yields
 * none here (store.ts adds `tracking.eta_changed`).
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
function mergeCheckpoints(
  known: readonly StoredCheckpoint[],
  incoming: readonly StoredCheckpoint[],
): StoredCheckpoint[] {
  const byKey = new Map<string, { c: StoredCheckpoint; i: number }>();
  let i = 0;
  for (const c of [...known, ...incoming]) byKey.set(keyOf(c), { c, i: i++ });
  return [...byKey.values()].sort((a, b) => (a.c.at === b.c.at ? b.i - a.i : a.c.at < b.c.at ? 1 : -1)).map((x) => x.c);
}

/** Merges a fresh snapshot into the stored record (or nothing); returns the record and its event (null: none). */
export function applySnapshot(
  prev: ShipmentRecord | undefined,
  snap: TrackingSnapshot,
): { record: ShipmentRecord; event: EventType | null } {
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
