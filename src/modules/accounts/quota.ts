/**
 * Monthly quota (spec-map Decisions: Quota month): only `GET /v1/track` answered 200 counts, per UTC calendar month;
 * exact across replicas (units granted under the row lock, quota-lease.ts).
 */
import { and, eq } from "drizzle-orm";
import type postgres from "postgres";
import type { DbOrTx } from "../../db/client.ts";
import { usageCounters } from "../../db/schema/index.ts";

/** `YYYY-MM` of the UTC calendar month containing `ms`. */
export function periodOf(ms: number): string {
  if (ms >= lastMonth.startMs && ms < lastMonth.endMs) return lastMonth.period;
  const d = new Date(ms);
  const startMs = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  lastMonth = { period: d.toISOString().slice(0, 7), startMs, endMs: quotaResetsAt(ms).getTime() };
  return lastMonth.period;
}
let lastMonth = { period: "", startMs: 0, endMs: 0 };

/** First instant of the next UTC month, when the quota resets. */
export function quotaResetsAt(ms: number): Date {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

/** One reserved unit: `used` counts it (when `ok`); `period` is its `YYYY-MM` month, `day` the `YYYY-MM-DD` it counts on. */
export type Reservation =
  | { ok: true; used: number; period: string; day: string }
  | { ok: false; used: number; period: string; day: string };

/** Units of the month of `nowMs` (ms) counted in the row, units replicas hold unused included. */
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

/** Locks (creating at 0) the month row in `tx` and returns units used (docs/shipments.md, quota of bulk follows). */
export async function lockUsage(tx: postgres.TransactionSql, accountId: string, period: string): Promise<number> {
  await tx`insert into usage_counters (account_id, period, used) values (${accountId}, ${period}, 0) on conflict do nothing`;
  const [{ used }] =
    (await tx`select used from usage_counters where account_id = ${accountId} and period = ${period} for update`) as unknown as [
      { used: number },
    ];
  return used;
}

/** Counts `units` more in `period` and on UTC `day` (`YYYY-MM-DD`), in the transaction holding {@link lockUsage}. */
export async function addUsage(
  tx: postgres.TransactionSql,
  accountId: string,
  period: string,
  day: string,
  units: number,
): Promise<void> {
  await tx`
    with m as (update usage_counters set used = used + ${units} where account_id = ${accountId} and period = ${period} returning 1)
    insert into usage_daily (account_id, day, used) select ${accountId}, ${day}::date, ${units} from m
    on conflict (account_id, day) do update set used = usage_daily.used + excluded.used`;
}
