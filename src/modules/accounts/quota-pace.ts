/**
 * How long a quota block's unused units wait before going back to the month row (quota-lease.ts): a multiple of the
 * account's recent longest gap between requests, so an account asking every few seconds keeps its block instead of
 * taking and returning one per request, and a burst that stops gives its units back after 1 s.
 */

/** Shortest idle period: unused units go back to the row after at least this long without use, ms. */
export const LEASE_IDLE_MS = 1_000;
/** Longest idle period, ms: bounds how long units wait unused in a block (and are lost by a replica killed). */
export const LEASE_IDLE_MAX_MS = 30_000;
/** A block's idle period is this many times the account's recent longest gap between requests. */
export const LEASE_IDLE_GAPS = 3;
/** Each request keeps this share of the remembered longest gap: a slower pace is taken at once, a faster one in a few requests. */
const GAP_DECAY = 0.75;
/** The pace of an account's requests: its last use (ms since the epoch) and its recent longest gap, ms. */
export interface Pace {
  lastUseMs: number;
  gapMs: number;
}

/** Idle period of a block whose account's recent longest gap between requests is `gapMs`, ms. */
export function idlePeriodMs(gapMs: number): number {
  return Math.min(Math.max(LEASE_IDLE_GAPS * gapMs, LEASE_IDLE_MS), LEASE_IDLE_MAX_MS);
}

/** The pace after a request at `nowMs`. */
export function paced(p: Pace | undefined, nowMs: number): number {
  return p ? Math.max(nowMs - p.lastUseMs, p.gapMs * GAP_DECAY) : 0;
}
