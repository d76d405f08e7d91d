/**
 * Retention of the accounts module's counters (housekeeping, `RETENTION_DAYS`): fixed-window rate counters and
 * demo hits. Only the newest hour of either is ever read; these go at retention too. The accounts module is the
 * one writer of `rate_windows` and `demo_hits` (docs/spec-map.md, "Table owners"); housekeeping calls
 * {@link pruneRateCounters}.
 */
import type { Db } from "../../db/client.ts";
import { deleteInBatches, type PruneBatches } from "../../db/batches.ts";

/**
 * Deletes rate-limit windows that started, and demo hits made, before `cutoffMs` (ms since the epoch;
 * housekeeping passes now − RETENTION_DAYS). Returns the rows deleted per table.
 * @throws whatever the database throws (the next housekeeping run tries again).
 */
export async function pruneRateCounters(db: Db, cutoffMs: number, batches: PruneBatches): Promise<{ rateWindows: number; demoHits: number }> {
  const sql = db.$client;
  const cutoff = new Date(cutoffMs).toISOString();
  const batch = batches.batchSize;
  const rateWindows = await deleteInBatches(batches, async () =>
    (await sql`
      delete from rate_windows where ctid in (
        select ctid from rate_windows where window_start < ${cutoff} limit ${batch})
      returning 1`).length,
  );
  const demoHits = await deleteInBatches(batches, async () =>
    (await sql`
      delete from demo_hits where id in (
        select id from demo_hits where at < ${cutoff} limit ${batch})
      returning 1`).length,
  );
  return { rateWindows, demoHits };
}
