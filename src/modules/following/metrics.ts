/** The re-check backlog count (bench/recheck.ts); the scrape sets its gauge itself (src/modules/metrics/scrape.ts). Counters: src/modules/metrics/following.ts. */
import type { Db } from "../../db/client.ts";

export { followingMetrics, type FollowingMetrics } from "../metrics/following.ts";

/**
 * Unclaimed shipments due at `nowMs` (ms) in either schedule, each through its due index: rows due on their own
 * time and the members of due chunks no run holds. @throws the database's errors.
 */
export async function countDue(db: Db, nowMs: number): Promise<number> {
  const now = new Date(nowMs).toISOString();
  const [r] = await db.$client`select
    (select count(*)::int from recheck_queue where due_at <= ${now} and (lease_until is null or lease_until <= ${now}))
    + (select count(*)::int from recheck_schedule
       where due_at is not null and due_at <= ${now} and (lease_until is null or lease_until <= ${now}))
    + (select count(*)::int from recheck_chunks c join recheck_schedule r on r.chunk_id = c.id and r.due_at is null
       where c.due_at <= ${now} and (c.lease_until is null or c.lease_until <= ${now})) as n`;
  return (r?.n as number | undefined) ?? 0;
}
