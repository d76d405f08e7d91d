/** The re-check backlog gauge, read per scrape so replicas agree (aggregate with `max`); counters: src/modules/metrics/following.ts. */
import type { Db } from "../../db/client.ts";
import type { FollowingMetrics } from "../metrics/following.ts";

export { createFollowingMetrics, followingMetrics, type FollowingMetrics } from "../metrics/following.ts";

/** Unclaimed shipments due at `nowMs` (ms), counted through `recheck_queue_due_idx`. @throws the database's errors. */
export async function countDue(db: Db, nowMs: number): Promise<number> {
  const now = new Date(nowMs).toISOString();
  const [r] =
    await db.$client`select count(*)::int as n from recheck_queue where due_at <= ${now} and (lease_until is null or lease_until <= ${now})`;
  return (r?.n as number | undefined) ?? 0;
}

/** Sets the backlog gauge from the database (call right before rendering). */
export async function refreshBacklog(m: FollowingMetrics, db: Db, nowMs: number): Promise<void> {
  m.dueBacklog.set(await countDue(db, nowMs));
}
