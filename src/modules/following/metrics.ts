/**
 * The re-check backlog read for the following counters (docs/deployment.md,
 * "Probes, metrics and logs"): the counters
 * themselves live in the metrics module (src/modules/metrics/following.ts,
 * re-exported here), so tracking records into them without importing this
 * module. The due backlog is a gauge read from the database on each scrape,
 * so every replica reports the same shared figure (aggregate it with `max`).
 */
import type { Db } from "../../db/client.ts";
import type { FollowingMetrics } from "../metrics/following.ts";

export { createFollowingMetrics, followingMetrics, type FollowingMetrics } from "../metrics/following.ts";

/**
 * Number of shipments due at `nowMs` (ms since the epoch).
 * Reads the schedule (`recheck_queue`) through its due index
 * `recheck_queue_due_idx`, so the count costs the backlog, not the table. Claimed rows
 * (a lease still running) are not counted.
 * @throws whatever the database throws.
 */
export async function countDue(db: Db, nowMs: number): Promise<number> {
  const now = new Date(nowMs).toISOString();
  const [r] = await db.$client`select count(*)::int as n from recheck_queue where due_at <= ${now} and (lease_until is null or lease_until <= ${now})`;
  return (r?.n as number | undefined) ?? 0;
}

/** Sets the backlog gauge from the database (call right before rendering). */
export async function refreshBacklog(m: FollowingMetrics, db: Db, nowMs: number): Promise<void> {
  m.dueBacklog.set(await countDue(db, nowMs));
}
