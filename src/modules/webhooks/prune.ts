/**
 * Retention of the webhooks module's outbox tables (housekeeping, `RETENTION_DAYS`): final outbox rows and
 * attempt logs past retention. The webhooks module is the one writer of `deliveries` and `delivery_attempts`
 * (docs/spec-map.md, "Table owners"); housekeeping calls {@link pruneDeliveries}.
 */
import type { Db } from "../../db/client.ts";
import { deleteInBatches, type PruneBatches } from "../../db/batches.ts";

/**
 * Deletes final outbox rows (delivered, abandoned, dropped, skipped) last changed before `cutoffMs`, then attempt
 * logs started before it. `cutoffMs`: ms since the epoch (housekeeping passes now − RETENTION_DAYS); everything
 * strictly older goes, nothing newer. Returns the rows deleted per table.
 * @throws whatever the database throws (the next housekeeping run tries again).
 */
export async function pruneDeliveries(db: Db, cutoffMs: number, batches: PruneBatches): Promise<{ deliveries: number; attempts: number }> {
  const sql = db.$client;
  const cutoff = new Date(cutoffMs).toISOString();
  const batch = batches.batchSize;
  // Final outbox rows, by their last change; their attempt rows go with them (ON DELETE CASCADE).
  // Pending rows are never touched here, however old: the worker still owes them an attempt.
  // `created_at < cutoff` follows from `updated_at < cutoff` (a row is changed only after it is
  // created) and lets deliveries_created_idx bound the scan: no index covers updated_at or state, so
  // the worker's claim and outcome updates stay HOT. Rows created before the cutoff but changed after
  // it (retries still running then) are the only ones the scan passes over.
  const deliveries = await deleteInBatches(batches, async () =>
    (await sql`
      delete from deliveries where id in (
        select id from deliveries
        where created_at < ${cutoff} and updated_at < ${cutoff}
          and state in ('delivered', 'abandoned', 'dropped', 'skipped')
        limit ${batch})
      returning 1`).length,
  );
  // Attempt logs past retention even where the delivery itself is younger (a long retry history).
  const attempts = await deleteInBatches(batches, async () =>
    (await sql`
      delete from delivery_attempts where id in (
        select id from delivery_attempts where started_at < ${cutoff} limit ${batch})
      returning 1`).length,
  );
  return { deliveries, attempts };
}
