/** The re-check schedule's writes of a record (store.ts): `recheck_queue` below layout level 2, else `recheck_schedule`. */
import { eq } from "drizzle-orm";
import type { Db, Tx } from "../../db/client.ts";
import { recheckQueue, recheckSchedule } from "../../db/schema/index.ts";

/** What a successful fetch resets on the schedule row: failure count and lease. */
export const FETCHED = { failures: 0, leaseUntil: null, leaseOwner: null };

/**
 * Puts shipment `id` on the re-check schedule at `dueAt`, or moves it there (spec-map Decisions: Re-checks):
 * `recheck_queue` while the database is below layout level 2, else `recheck_schedule` (checked at `now`).
 */
export async function reschedule(
  tx: Tx,
  legacy: boolean,
  row: { id: string; courier: string; trackingNumber: string },
  dueAt: Date,
  now: Date,
): Promise<void> {
  const { id: shipmentId, courier, trackingNumber } = row;
  if (legacy) {
    await tx
      .insert(recheckQueue)
      .values({ shipmentId, courier, trackingNumber, dueAt })
      .onConflictDoUpdate({ target: recheckQueue.shipmentId, set: { dueAt, ...FETCHED } });
    return;
  }
  await tx
    .insert(recheckSchedule)
    .values({ shipmentId, courier, trackingNumber, dueAt, checkedAt: now })
    .onConflictDoUpdate({ target: recheckSchedule.shipmentId, set: { dueAt, checkedAt: now, ...FETCHED } });
}

/**
 * The no-change re-check from layout level 2: deletes the schedule row (on the page its claim just wrote) and
 * appends the next one with the check time; nothing on `shipments`. No row (unfollowed meanwhile): nothing is
 * appended. Returns whether it was rescheduled. @throws on DB errors
 */
export async function appendNext(
  db: Db,
  row: { id: string; state: string; followers: number },
  due: string,
  now: Date,
): Promise<boolean> {
  const rows = await db.$client`
    with d as (
      delete from recheck_schedule where shipment_id = ${row.id}
        and exists (select 1 from shipments s where s.id = ${row.id} and s.state = ${row.state}
          and s.followers = ${row.followers} and not s.terminal)
      returning shipment_id, courier, tracking_number
    )
    insert into recheck_schedule (shipment_id, courier, tracking_number, due_at, checked_at)
    select shipment_id, courier, tracking_number, ${due}::timestamptz, ${now.toISOString()}::timestamptz from d
    returning shipment_id`;
  return rows.length > 0;
}

/** Takes shipment `id` off the schedule (terminal, lookup-only or unfollowed). */
export async function unscheduleIn(tx: Tx, legacy: boolean, id: string): Promise<void> {
  if (legacy) await tx.delete(recheckQueue).where(eq(recheckQueue.shipmentId, id));
  else await tx.delete(recheckSchedule).where(eq(recheckSchedule.shipmentId, id));
}
