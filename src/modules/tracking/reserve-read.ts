/**
 * The first database step of `GET /v1/track` in ONE statement: reserve a unit
 * of the month's quota (accounts/quota.ts `reserveQuotaAlongside`, the
 * accounts module's own upsert) and read the stored shipment with whether the
 * account already follows it (the read tracking/store.ts `recordFetch` would
 * otherwise make after the courier call).
 *
 * Reading the row before the courier call rather than after changes nothing
 * `recordFetch` relies on: its fast path writes nothing or one update guarded
 * on the state and followers it read, and anything else goes down the locked
 * full path, which reads the row again under the lock.
 */
import { getTableColumns } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { shipments } from "../../db/schema/index.ts";
import { reserveQuotaAlongside, type Reservation } from "../accounts/quota.ts";
import type { FetchRow } from "./store.ts";

/** Column key → SQL name and the Drizzle column that turns the driver's value into the row's (dates, JSON). */
const COLUMNS = Object.entries(getTableColumns(shipments)).map(([key, col]) => ({ key, name: col.name, col }));

function toFetchRow(r: Record<string, unknown>): FetchRow {
  const row: Record<string, unknown> = { following: Boolean(r.following) };
  for (const { key, name, col } of COLUMNS) {
    const v = r[name];
    row[key] = v === null || v === undefined ? null : col.mapFromDriverValue(v);
  }
  return row as FetchRow;
}

/**
 * Reserves one unit of this month's quota and reads the shipment courier + AWB.
 * @param quota the plan's monthly quota (0: nothing can be reserved).
 * @param nowMs now, ms since the epoch (picks the UTC calendar month).
 * @returns the reservation as `reserveQuota` gives it, and the stored row (null: not stored yet;
 *   undefined when the quota is used up and nothing was read).
 */
export async function reserveAndRead(
  db: Db,
  accountId: string,
  quota: number,
  nowMs: number,
  courier: string,
  trackingNumber: string,
): Promise<{ reservation: Reservation; stored?: FetchRow | null }> {
  const read = db.$client`
    select s.*, exists(select 1 from follows f where f.account_id = ${accountId} and f.shipment_id = s.id) as following
    from shipments s where s.courier = ${courier} and s.tracking_number = ${trackingNumber}`;
  const { reservation, row } = await reserveQuotaAlongside(db, accountId, quota, nowMs, read);
  if (!row) return { reservation };
  return { reservation, stored: row.id === null || row.id === undefined ? null : toFetchRow(row) };
}
