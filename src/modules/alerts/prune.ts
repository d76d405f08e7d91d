/**
 * Retention of the alerts outbox (housekeeping, `RETENTION_DAYS`): alerts no longer pending go at retention, except
 * a quota alert, which stays 62 days: its dedupe key is the month, and while it is there the month alerts once.
 */
import type { Db } from "../../db/client.ts";
import { deleteInBatches, type PruneBatches } from "../../db/batches.ts";

/**
 * Deletes alerts created before `cutoffMs` (ms since the epoch) that are sent, skipped or failed; quota alerts only
 * once 62 days before `nowMs` too. Returns the rows deleted. @throws whatever the database throws (the next
 * housekeeping run tries again).
 */
export async function pruneAlerts(db: Db, cutoffMs: number, nowMs: number, batches: PruneBatches): Promise<number> {
  const sql = db.$client;
  const cutoff = new Date(cutoffMs).toISOString();
  const quotaCutoff = new Date(Math.min(cutoffMs, nowMs - 62 * 86_400_000)).toISOString();
  return deleteInBatches(batches, async () =>
    (await sql`
      delete from alerts where id in (
        select id from alerts where created_at < ${cutoff} and state <> 'pending'
          and (kind not like 'quota%' or created_at < ${quotaCutoff})
        limit ${batches.batchSize})
      returning 1`).length,
  );
}
