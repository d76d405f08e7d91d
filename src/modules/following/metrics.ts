/** The re-check backlog count (bench/recheck.ts); the scrape sets its gauge itself (src/modules/metrics/scrape.ts). Counters: src/modules/metrics/following.ts. */
import type { Db } from "../../db/client.ts";
import { DUE_BUCKET_SQL } from "./layout.ts";

export { followingMetrics, type FollowingMetrics } from "../metrics/following.ts";

/** Unclaimed shipments due at `nowMs` (ms) in either schedule, each through its due index. @throws the database's errors. */
export async function countDue(db: Db, nowMs: number): Promise<number> {
  const now = new Date(nowMs).toISOString();
  const [r] = await db.$client`select
    (select count(*)::int from recheck_queue where due_at <= ${now} and (lease_until is null or lease_until <= ${now}))
    + (select count(*)::int from recheck_schedule
       where ${db.$client.unsafe(DUE_BUCKET_SQL)} <= date_bin('15 minutes', ${now}::timestamptz, timestamptz '2000-01-01 00:00:00+00')
         and due_at <= ${now} and (lease_until is null or lease_until <= ${now})) as n`;
  return (r?.n as number | undefined) ?? 0;
}
