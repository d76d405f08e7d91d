/**
 * Retention of the webhooks module's outbox tables (housekeeping, `RETENTION_DAYS`): final outbox rows and
 * attempt logs past retention. The webhooks module is the one writer of `deliveries` and `delivery_attempts`
 * (docs/spec-map.md, "Table owners"); housekeeping calls {@link pruneDeliveries}.
 */
import type { Db } from "../../db/client.ts";
import { deleteInBatches, type PruneBatches } from "../../db/batches.ts";
import { createPartitions, dropPartitionsBefore, rowPruneBound } from "../../db/partitions.ts";

const FINAL = "('delivered', 'abandoned', 'dropped', 'skipped')";

/**
 * Weekly partitions of `deliveries` and `delivery_attempts` (docs/capacity.md, "Partitioned history"): creates those
 * of the coming weeks and drops those that end at or before `cutoffMs` whole; an outbox week holding a pending row
 * or one changed after the cutoff stays for {@link pruneDeliveries}. A dropped outbox row's attempt rows go with
 * their own (same or later) week.
 * @throws whatever the database throws (the next housekeeping run tries again).
 */
export async function deliveryPartitions(
  db: Db,
  nowMs: number,
  cutoffMs: number,
): Promise<{ created: string[]; dropped: string[] }> {
  const sql = db.$client;
  const created = [
    ...(await createPartitions(sql, "deliveries", "created_at", nowMs)),
    ...(await createPartitions(sql, "delivery_attempts", "started_at", nowMs)),
  ];
  const dropped = [
    ...(await dropPartitionsBefore(sql, "deliveries", cutoffMs, `state not in ${FINAL} or updated_at >= $1`)),
    ...(await dropPartitionsBefore(sql, "delivery_attempts", cutoffMs)),
  ];
  return { created, dropped };
}

/**
 * Deletes final outbox rows (delivered, abandoned, dropped, skipped) last changed before `cutoffMs`, then attempt
 * logs started before it; rows of the weekly partition holding the cutoff wait for {@link deliveryPartitions}. `cutoffMs`: ms since the epoch (housekeeping passes now − RETENTION_DAYS); everything
 * strictly older goes, nothing newer. Returns the rows deleted per table.
 * @throws whatever the database throws (the next housekeeping run tries again).
 */
export async function pruneDeliveries(
  db: Db,
  cutoffMs: number,
  batches: PruneBatches,
): Promise<{ deliveries: number; attempts: number }> {
  const sql = db.$client;
  const cutoff = new Date(cutoffMs).toISOString();
  // Row by row only below the week holding the cutoff: that week goes whole (deliveryPartitions).
  const below = new Date(await rowPruneBound(sql, "deliveries", cutoffMs)).toISOString();
  const attemptsBelow = new Date(await rowPruneBound(sql, "delivery_attempts", cutoffMs)).toISOString();
  const batch = batches.batchSize;
  // Final outbox rows, by their last change; their attempt rows go with them (ON DELETE CASCADE).
  // Pending rows are never touched here, however old: the worker still owes them an attempt.
  // `created_at < cutoff` follows from `updated_at < cutoff` (a row is changed only after it is
  // created) and lets deliveries_created_idx bound the scan: no index covers updated_at or state, so
  // the worker's claim and outcome updates stay HOT. Rows created before the cutoff but changed after
  // it (retries still running then) are the only ones the scan passes over. The delete repeats the bound
  // and matches (id, created_at): it looks in the partitions below the bound only.
  const deliveries = await deleteInBatches(
    batches,
    async () =>
      (
        await sql`
      delete from deliveries where created_at < ${below} and (id, created_at) in (
        select id, created_at from deliveries
        where created_at < ${below} and updated_at < ${cutoff}
          and state in ('delivered', 'abandoned', 'dropped', 'skipped')
        limit ${batch})
      returning 1`
      ).length,
  );
  // Attempt logs past retention even where the delivery itself is younger (a long retry history).
  const attempts = await deleteInBatches(
    batches,
    async () =>
      (
        await sql`
      delete from delivery_attempts where id in (
        select id from delivery_attempts where started_at < ${attemptsBelow} limit ${batch})
      returning 1`
      ).length,
  );
  return { deliveries, attempts };
}
