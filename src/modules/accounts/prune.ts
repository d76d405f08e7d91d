/** Retention of the accounts module's counters (housekeeping, `RETENTION_DAYS`): rate windows and demo hits. */
import type { Db } from "../../db/client.ts";
import { deleteInBatches, type PruneBatches } from "../../db/batches.ts";

/** Deletes rate windows and demo hits before `cutoffMs` (epoch ms); returns rows deleted per table. */
export async function pruneRateCounters(
  db: Db,
  cutoffMs: number,
  batches: PruneBatches,
): Promise<{ rateWindows: number; demoHits: number }> {
  const sql = db.$client;
  const cutoff = new Date(cutoffMs).toISOString();
  const batch = batches.batchSize;
  const rateWindows = await deleteInBatches(
    batches,
    async () =>
      (
        await sql`
      delete from rate_windows where ctid in (
        select ctid from rate_windows where window_start < ${cutoff} limit ${batch})
      returning 1`
      ).length,
  );
  const demoHits = await deleteInBatches(
    batches,
    async () =>
      (
        await sql`
      delete from demo_hits where id in (
        select id from demo_hits where at < ${cutoff} limit ${batch})
      returning 1`
      ).length,
  );
  return { rateWindows, demoHits };
}
