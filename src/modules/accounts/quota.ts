/**
 * Monthly quota (spec-map Decisions: Quota month): only `GET /v1/track` answered 200 counts; the
 * month is the calendar month in UTC.
 *
 * Exact under concurrency and across replicas: a unit is *reserved* with one
 * upsert whose `where used < quota` runs under the row lock, so with one unit
 * left and 50 requests in flight exactly one gets a row back. A request that
 * does not end in 200 *releases* its unit.
 */
import { and, eq } from "drizzle-orm";
import type postgres from "postgres";
import type { Db, DbOrTx } from "../../db/client.ts";
import { usageCounters } from "../../db/schema/index.ts";

/** `YYYY-MM` of the UTC calendar month containing `ms`. */
export function periodOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/** First instant of the next UTC month, when the quota resets. */
export function quotaResetsAt(ms: number): Date {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

export type Reservation = { ok: true; used: number; period: string } | { ok: false; used: number; period: string };

/**
 * Reserves one unit of this month's quota: ONE prepared statement on the hot path.
 *
 * Durability: the statement runs with `synchronous_commit = off` for this
 * transaction only, so it does not wait for its WAL flush. Exactness is
 * untouched (row lock and visibility do not depend on it, so replicas still
 * serialise on the row); what a crash of the database server can lose is
 * the last few hundred ms of increments (3 × wal_writer_delay at most), which
 * can only give an account a few lookups for free, never refuse one wrongly.
 * @returns `ok: true` with the count including this request, or `ok: false` when the quota is used up.
 */
export async function reserveQuota(db: Db, accountId: string, quota: number, nowMs: number): Promise<Reservation> {
  const period = periodOf(nowMs);
  if (quota > 0) {
    // Insert the month's row at 1, or bump it while below quota. Under the row lock concurrent
    // reservations serialise, so the `where` sees every earlier increment. `set_config(…, true)` is
    // SET LOCAL inside the statement's own implicit transaction: one round trip, one statement.
    const rows = await db.$client<{ used: number }[]>`
      with _ as (select set_config('synchronous_commit', 'off', true))
      insert into usage_counters (account_id, period, used)
      select ${accountId}, ${period}, 1 from _
      on conflict (account_id, period) do update set used = usage_counters.used + 1
      where usage_counters.used < ${quota}
      returning used`;
    if (rows[0]) return { ok: true, used: Number(rows[0].used), period };
  }
  return { ok: false, used: await usedThisMonth(db, accountId, nowMs), period };
}

/**
 * {@link reserveQuota} and one read of the caller's in ONE statement (one round trip): the same upsert, same
 * `where used < quota` under the row lock, same durability, as a data-modifying CTE beside `alongside`, a
 * postgres-js fragment that selects at most one row and writes nothing (`/v1/track` reads its stored shipment
 * with it: tracking/reserve-read.ts). Exactness is the upsert's, untouched by the read.
 * @returns the reservation; when a unit was reserved, also the columns `alongside` selected (all null when it
 *   found no row). When the quota is used up nothing is read.
 */
export async function reserveQuotaAlongside(
  db: Db,
  accountId: string,
  quota: number,
  nowMs: number,
  alongside: postgres.PendingQuery<postgres.Row[]>,
): Promise<{ reservation: Reservation; row?: Record<string, unknown> }> {
  if (quota <= 0) return { reservation: await reserveQuota(db, accountId, quota, nowMs) };
  const period = periodOf(nowMs);
  // A tagged template (fragment included): postgres-js prepares it once per connection.
  const rows = await db.$client<Record<string, unknown>[]>`
    with _ as (select set_config('synchronous_commit', 'off', true)),
    q as (
      insert into usage_counters (account_id, period, used)
      select ${accountId}, ${period}, 1 from _
      on conflict (account_id, period) do update set used = usage_counters.used + 1
      where usage_counters.used < ${quota}
      returning used)
    select (select used from q) as reserved_used, x.* from (select 1) as one left join lateral (${alongside}) as x on true`;
  const { reserved_used: used, ...row } = rows[0]!;
  if (used === null || used === undefined) return { reservation: { ok: false, used: await usedThisMonth(db, accountId, nowMs), period } };
  return { reservation: { ok: true, used: Number(used), period }, row };
}

/** Gives back a reserved unit (the request did not end in 200). Same durability as {@link reserveQuota}. */
export async function releaseQuota(db: Db, accountId: string, period: string): Promise<void> {
  await db.$client`
    with _ as (select set_config('synchronous_commit', 'off', true))
    update usage_counters set used = greatest(used - 1, 0)
    from _ where account_id = ${accountId} and period = ${period}`;
}

export async function usedThisMonth(db: DbOrTx, accountId: string, nowMs: number): Promise<number> {
  const rows = await db
    .select({ used: usageCounters.used })
    .from(usageCounters)
    .where(and(eq(usageCounters.accountId, accountId), eq(usageCounters.period, periodOf(nowMs))));
  return rows[0]?.used ?? 0;
}

/** The `usage` object of `/v1/track` (spec: GET /v1/track, usage): percent rounded to 2 decimals. */
export function usageView(used: number, quota: number, plan: string) {
  return { used, quota, plan, percent: quota > 0 ? Math.round((used / quota) * 10_000) / 100 : 100 };
}

/**
 * Locks the account's counter row for `period` (`YYYY-MM`) in the caller's postgres-js transaction `tx`, creating
 * it at 0 if needed, and returns the units used so far. The lock serialises this account's bulk follow calls and
 * its `/v1/track` reservations until `tx` ends (docs/shipments.md, quota of bulk follows).
 */
export async function lockUsage(tx: postgres.TransactionSql, accountId: string, period: string): Promise<number> {
  await tx`insert into usage_counters (account_id, period, used) values (${accountId}, ${period}, 0) on conflict do nothing`;
  const [{ used }] = (await tx`select used from usage_counters where account_id = ${accountId} and period = ${period} for update`) as unknown as [{ used: number }];
  return used;
}

/** Counts `units` more for the account in `period`, in the transaction that holds the row lock ({@link lockUsage}). */
export async function addUsage(tx: postgres.TransactionSql, accountId: string, period: string, units: number): Promise<void> {
  await tx`update usage_counters set used = used + ${units} where account_id = ${accountId} and period = ${period}`;
}
