/** Retention of the alerts outbox (housekeeping, `RETENTION_DAYS`; docs/alerts.md). */
import type { Db } from "../../db/client.ts";
import { deleteInBatches, type PruneBatches } from "../../db/batches.ts";

/**
 * Deletes settled alerts created before `cutoffMs` (quota ones, keyed by month, also 62 days before `nowMs`), and
 * the address confirmation links that expired before it.
 */
export async function pruneAlerts(db: Db, cutoffMs: number, nowMs: number, batches: PruneBatches): Promise<number> {
  const sql = db.$client;
  const cutoff = new Date(cutoffMs).toISOString();
  const quotaCutoff = new Date(Math.min(cutoffMs, nowMs - 62 * 86_400_000)).toISOString();
  const links = await deleteInBatches(
    batches,
    async () =>
      (
        await sql`delete from alert_address_links where id in (
          select id from alert_address_links where expires_at < ${cutoff} limit ${batches.batchSize}) returning 1`
      ).length,
  );
  const settled = await deleteInBatches(
    batches,
    async () =>
      (
        await sql`
      delete from alerts where id in (
        select id from alerts where created_at < ${cutoff} and state not in ('pending', 'queued')
          and (kind not like 'quota%' or created_at < ${quotaCutoff})
        limit ${batches.batchSize})
      returning 1`
      ).length,
  );
  return links + settled;
}
