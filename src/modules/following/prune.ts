/**
 * Retention of the following module's `events` (housekeeping, `RETENTION_DAYS`). The following module is the one
 * writer of `shipments`, `follows` and `events` (docs/spec-map.md, "Table owners"); housekeeping calls
 * {@link pruneEvents}.
 */
import type { Db } from "../../db/client.ts";
import { deleteInBatches, type PruneBatches } from "../../db/batches.ts";
import { createPartitions, dropPartitionsBefore, rowPruneBound } from "../../db/partitions.ts";

/**
 * Weekly partitions of `events` (docs/capacity.md, "Partitioned history"): creates those of the coming weeks and
 * drops those that end at or before `cutoffMs` whole. No outbox row needs its event row (an outbox row carries what
 * it delivers, and no foreign key points at `events`), so a week past retention goes at once.
 * @throws whatever the database throws (the next housekeeping run tries again).
 */
export async function eventPartitions(
  db: Db,
  nowMs: number,
  cutoffMs: number,
): Promise<{ created: string[]; dropped: string[] }> {
  const created = await createPartitions(db.$client, "events", "created_at", nowMs);
  return { created, dropped: await dropPartitionsBefore(db.$client, "events", cutoffMs) };
}

/**
 * Deletes events created before `cutoffMs` (ms since the epoch; housekeeping passes now − RETENTION_DAYS) that no
 * outbox row refers to any more, except those in the weekly partition holding the cutoff (dropped whole later). Run it after the webhooks module's prune, so the events whose deliveries that
 * prune removed go in the same run. Returns the events deleted.
 * @throws whatever the database throws (the next housekeeping run tries again).
 */
export async function pruneEvents(db: Db, cutoffMs: number, batches: PruneBatches): Promise<number> {
  const sql = db.$client;
  // Row by row only below the week holding the cutoff: that week goes whole (eventPartitions).
  const cutoff = new Date(await rowPruneBound(sql, "events", cutoffMs)).toISOString();
  // An event goes only once no outbox row refers to it: deleting it would cascade to its deliveries,
  // and a delivery (pending or still within retention) must outlive the event row it points at.
  // events_created_idx bounds the candidates; the anti-join hashes deliveries.event_id once. This one
  // statement reads the webhooks module's `deliveries` (a documented read-only join, never a write).
  return deleteInBatches(
    batches,
    async () =>
      (
        await sql`
      delete from events where id in (
        select e.id from events e
        where e.created_at < ${cutoff}
          and not exists (select 1 from deliveries d where d.event_id = e.id)
        limit ${batches.batchSize})
      returning 1`
      ).length,
  );
}
