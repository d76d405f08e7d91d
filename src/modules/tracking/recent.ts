/**
 * Finished shipments fetched moments ago, answered again without calling the courier
 * (docs/shipments.md, "Lookups of finished shipments").
 *
 * Only terminal records are kept (delivered, returned, cancelled: spec, Statuses — the service stops
 * following them, so a lookup has nobody to make follow and nothing to schedule). A record is reused
 * for `TERMINAL_REUSE_SECONDS` after the fetch that produced it, by this process only; after that the
 * next lookup calls the courier again, so a courier that later shows newer checkpoints is seen within
 * that window. Each process keeps at most `RECENT_FETCHES_MAX` records (src/services.ts; oldest fetch dropped first).
 */
import { isTerminal } from "../../domain/states.ts";
import type { RecentCache } from "../../lib/recent-cache.ts";
import type { ShipmentRecord } from "../following/normalise.ts";

/**
 * The terminal record of courier + AWB fetched by this process within `windowMs` before `nowMs` (both ms),
 * or undefined.
 */
export function recentTerminal(recent: RecentCache, courier: string, awb: string, nowMs: number, windowMs: number): ShipmentRecord | undefined {
  if (windowMs <= 0) return undefined;
  // Only rememberFetch stores here, and only records.
  return recent.get(courier + " " + awb, nowMs, windowMs) as ShipmentRecord | undefined;
}

/** Remembers the record a fetch at `nowMs` (ms) stored, when it is terminal; forgets the AWB otherwise. */
export function rememberFetch(recent: RecentCache, courier: string, awb: string, record: ShipmentRecord, nowMs: number): void {
  const key = courier + " " + awb;
  if (isTerminal(record.state)) recent.set(key, record, nowMs);
  else recent.delete(key);
}
