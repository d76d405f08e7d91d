/** The re-check schedule's writes of a record (store.ts): `recheck_queue` below layout level 2, else a chunk's membership. */
import { and, asc, between, eq, isNull, sql } from "drizzle-orm";
import type { Db, DbOrTx, Tx } from "../../db/client.ts";
import { recheckChunks, recheckQueue, recheckSchedule } from "../../db/schema/index.ts";
import { RECHECK_JITTER } from "../../domain/following.ts";
import { defined } from "../../lib/defined.ts";

/** What a successful fetch resets on the schedule row: failure count and lease. */
export const FETCHED = { failures: 0, leaseUntil: null, leaseOwner: null };

/** How far from its target a shipment may join an existing chunk, ms (docs/rechecks.md, "Re-checks in chunks"). */
const CHUNK_REACH_MS = 30_000;

/**
 * The chunk of `courier` whose due time is nearest `dueAt` within {@link CHUNK_REACH_MS} and within the ± 10 % of
 * one interval after `nowMs` (spec "What the service does"), or a new chunk due at `dueAt`. @throws on DB errors
 */
async function chunkFor(q: DbOrTx, courier: string, dueAt: Date, nowMs: number, intervalMs: number) {
  const t = dueAt.getTime();
  const lo = new Date(Math.max(t - CHUNK_REACH_MS, nowMs + intervalMs * (1 - RECHECK_JITTER)));
  const hi = new Date(Math.min(t + CHUNK_REACH_MS, nowMs + intervalMs * (1 + RECHECK_JITTER)));
  const [near] = await q
    .select({ id: recheckChunks.id })
    .from(recheckChunks)
    .where(and(eq(recheckChunks.courier, courier), between(recheckChunks.dueAt, lo, hi)))
    .orderBy(asc(sql`abs(extract(epoch from ${recheckChunks.dueAt} - ${dueAt.toISOString()}::timestamptz))`))
    .limit(1);
  if (near) return near.id;
  const [made] = await q.insert(recheckChunks).values({ courier, dueAt }).returning({ id: recheckChunks.id });
  return defined(made, "the inserted chunk").id;
}

/**
 * Puts shipment `id` on the re-check schedule with its next check near `dueAt`, or moves it there (spec-map
 * Decisions: Re-checks): `recheck_queue` while the database is below layout level 2, else the chunk nearest
 * `dueAt` (checked at `now`). `keep`: a run of its chunk checked it, so a member keeps its chunk.
 */
export async function reschedule(
  tx: Tx,
  legacy: boolean,
  row: { id: string; courier: string; trackingNumber: string },
  dueAt: Date,
  now: Date,
  o: { intervalMs: number; keep?: boolean },
): Promise<void> {
  const { id: shipmentId, courier, trackingNumber } = row;
  if (legacy) {
    await tx
      .insert(recheckQueue)
      .values({ shipmentId, courier, trackingNumber, dueAt })
      .onConflictDoUpdate({ target: recheckQueue.shipmentId, set: { dueAt, ...FETCHED } });
    return;
  }
  if (o.keep) {
    const [member] = await tx
      .select({ id: recheckSchedule.shipmentId })
      .from(recheckSchedule)
      .where(and(eq(recheckSchedule.shipmentId, shipmentId), isNull(recheckSchedule.dueAt)));
    if (member) return;
  }
  const chunkId = await chunkFor(tx, courier, dueAt, now.getTime(), o.intervalMs);
  await tx
    .insert(recheckSchedule)
    .values({ shipmentId, courier, trackingNumber, chunkId, checkedAt: now })
    .onConflictDoUpdate({
      target: recheckSchedule.shipmentId,
      set: { chunkId, dueAt: null, checkedAt: now, ...FETCHED },
    });
}

/**
 * A lookup (or a check off its chunk's time) that found nothing new, from layout level 2: moves the shipment to
 * the chunk nearest `due` (a lookup counts as a re-check), unless the stored record changed meanwhile. Returns
 * whether it was moved (false: unfollowed or changed meanwhile; the caller takes the full path). @throws on DB errors
 */
export async function moveToChunk(
  db: Db,
  row: { id: string; courier: string; state: string; followers: number },
  due: Date,
  now: Date,
  intervalMs: number,
): Promise<boolean> {
  const chunk = await chunkFor(db, row.courier, due, now.getTime(), intervalMs);
  const rows = await db.$client`
    update recheck_schedule set chunk_id = ${chunk}, due_at = null, checked_at = ${now.toISOString()},
      failures = 0, lease_until = null, lease_owner = null
    where shipment_id = ${row.id}
      and exists (select 1 from shipments s where s.id = ${row.id} and s.state = ${row.state}
        and s.followers = ${row.followers} and not s.terminal)
    returning shipment_id`;
  return rows.length > 0;
}

/** Takes shipment `id` off the schedule (terminal, lookup-only or unfollowed). */
export async function unscheduleIn(tx: Tx, legacy: boolean, id: string): Promise<void> {
  if (legacy) await tx.delete(recheckQueue).where(eq(recheckQueue.shipmentId, id));
  else await tx.delete(recheckSchedule).where(eq(recheckSchedule.shipmentId, id));
}
