/**
 * Monthly quota (CONTRACT 2): only `GET /v1/track` answered 200 counts; the
 * month is the calendar month in UTC.
 *
 * Exact under concurrency and across replicas: a unit is *reserved* with one
 * upsert whose `where used < quota` runs under the row lock, so with one unit
 * left and 50 requests in flight exactly one gets a row back. A request that
 * does not end in 200 *releases* its unit.
 */
import { and, eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
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
 * Reserves one unit of this month's quota.
 * @returns `ok: true` with the count including this request, or `ok: false` when the quota is used up.
 */
export async function reserveQuota(db: DbOrTx, accountId: string, quota: number, nowMs: number): Promise<Reservation> {
  const period = periodOf(nowMs);
  if (quota > 0) {
    // One statement: insert the month's row at 1, or bump it while below quota. Under the row lock
    // concurrent reservations serialise, so the `where` sees every earlier increment.
    const rows = await db
      .insert(usageCounters)
      .values({ accountId, period, used: 1 })
      .onConflictDoUpdate({
        target: [usageCounters.accountId, usageCounters.period],
        set: { used: sql`${usageCounters.used} + 1` },
        setWhere: sql`${usageCounters.used} < ${quota}`,
      })
      .returning({ used: usageCounters.used });
    if (rows[0]) return { ok: true, used: rows[0].used, period };
  }
  return { ok: false, used: await usedThisMonth(db, accountId, nowMs), period };
}

/** Gives back a reserved unit (the request did not end in 200). */
export async function releaseQuota(db: DbOrTx, accountId: string, period: string): Promise<void> {
  await db
    .update(usageCounters)
    .set({ used: sql`greatest(${usageCounters.used} - 1, 0)` })
    .where(and(eq(usageCounters.accountId, accountId), eq(usageCounters.period, period)));
}

export async function usedThisMonth(db: DbOrTx, accountId: string, nowMs: number): Promise<number> {
  const rows = await db
    .select({ used: usageCounters.used })
    .from(usageCounters)
    .where(and(eq(usageCounters.accountId, accountId), eq(usageCounters.period, periodOf(nowMs))));
  return rows[0]?.used ?? 0;
}

/** The `usage` object of `/v1/track` (CONTRACT 1): percent rounded to 2 decimals. */
export function usageView(used: number, quota: number, plan: string) {
  return { used, quota, plan, percent: quota > 0 ? Math.round((used / quota) * 10_000) / 100 : 100 };
}
