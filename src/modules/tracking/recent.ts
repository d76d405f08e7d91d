/**
 * Finished shipments fetched moments ago, answered again without calling the courier
 * (docs/shipments.md, "Lookups of finished shipments").
 *
 * Only terminal records are kept (delivered, returned, cancelled: spec, Statuses — the service stops
 * following them, so a lookup has nobody to make follow and nothing to schedule). A record is reused
 * for `TERMINAL_REUSE_SECONDS` after the fetch that produced it, by this process only; after that the
 * next lookup calls the courier again, so a courier that later shows newer checkpoints is seen within
 * that window. Each process keeps at most {@link RECENT_MAX} records (oldest fetch dropped first).
 */
import type { Db } from "../../db/client.ts";
import { isTerminal } from "../../domain/states.ts";
import type { ShipmentRecord } from "../following/normalise.ts";

/** Records kept per process. */
export const RECENT_MAX = 10_000;

interface Entry {
  record: ShipmentRecord;
  fetchedMs: number;
}

const byPool = new WeakMap<Db, Map<string, Entry>>();

function entries(db: Db): Map<string, Entry> {
  let m = byPool.get(db);
  if (!m) byPool.set(db, (m = new Map()));
  return m;
}

/**
 * The terminal record of courier + AWB fetched by this process within `windowMs` before `nowMs` (both ms),
 * or undefined.
 */
export function recentTerminal(db: Db, courier: string, awb: string, nowMs: number, windowMs: number): ShipmentRecord | undefined {
  if (windowMs <= 0) return undefined;
  const m = byPool.get(db);
  const key = courier + " " + awb;
  const e = m?.get(key);
  if (!e) return undefined;
  if (nowMs - e.fetchedMs < windowMs && nowMs >= e.fetchedMs) return e.record;
  m!.delete(key);
  return undefined;
}

/** Remembers the record a fetch at `nowMs` (ms) stored, when it is terminal; forgets the AWB otherwise. */
export function rememberFetch(db: Db, courier: string, awb: string, record: ShipmentRecord, nowMs: number): void {
  const m = entries(db);
  const key = courier + " " + awb;
  m.delete(key);
  if (!isTerminal(record.state)) return;
  m.set(key, { record, fetchedMs: nowMs });
  if (m.size > RECENT_MAX) m.delete(m.keys().next().value!);
}
