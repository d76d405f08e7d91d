/** How long a quota block's unused units wait before going back. Why: docs/performance.md#decisions (account's pace). */

/** Shortest idle period, ms. */
export const LEASE_IDLE_MS = 1_000;
/** Longest idle period, ms (bounds units lost by a replica killed). */
export const LEASE_IDLE_MAX_MS = 30_000;
/** A block's idle period is this many times the account's recent longest gap between requests. */
export const LEASE_IDLE_GAPS = 3;
/** Share of the remembered longest gap each request keeps. */
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
