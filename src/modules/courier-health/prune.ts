/** Retention of the courier health tables: buckets and ended incidents past 30 days (docs/courier-health.md). */
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { HEALTH } from "../../domain/courier-health.ts";

/** Deletes buckets and ended incidents older than {@link HEALTH.retentionMs} before `nowMs`; returns the counts. */
export async function pruneCourierHealth(db: Db, nowMs: number): Promise<{ buckets: number; incidents: number }> {
  const cutoff = new Date(nowMs - HEALTH.retentionMs).toISOString();
  const b = (await db.execute(
    sql`delete from courier_call_buckets where minute < ${cutoff}::timestamptz returning 1`,
  )) as unknown as unknown[];
  const i = (await db.execute(
    sql`delete from courier_incidents where ended_at < ${cutoff}::timestamptz returning 1`,
  )) as unknown as unknown[];
  return { buckets: b.length, incidents: i.length };
}
