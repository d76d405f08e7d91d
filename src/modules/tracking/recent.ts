/** Terminal shipments this process fetched recently, answered again (Why: docs/shipments.md#lookups-of-finished-shipments). */
import { isTerminal } from "../../domain/states.ts";
import type { RecentCache } from "../../lib/recent-cache.ts";
import type { ShipmentRecord } from "../following/normalise.ts";

/** The terminal record of courier + AWB fetched here within `windowMs` before `nowMs` (ms), or undefined. */
export function recentTerminal(
  recent: RecentCache,
  courier: string,
  awb: string,
  nowMs: number,
  windowMs: number,
): ShipmentRecord | undefined {
  if (windowMs <= 0) return undefined;
  return recent.get(`${courier} ${awb}`, nowMs, windowMs) as ShipmentRecord | undefined;
}

/** Remembers the record a fetch at `nowMs` (ms) stored, when it is terminal; forgets the AWB otherwise. */
export function rememberFetch(
  recent: RecentCache,
  courier: string,
  awb: string,
  record: ShipmentRecord,
  nowMs: number,
): void {
  const key = `${courier} ${awb}`;
  if (isTerminal(record.state)) recent.set(key, record, nowMs);
  else recent.delete(key);
}
