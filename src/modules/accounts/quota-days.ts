/** The monthly quota by UTC day (docs/dashboard.md, "Overview"): days are written with the month row, so sum to it. */
import { and, eq, gte, lt } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { usageDaily } from "../../db/schema/index.ts";

let lastDay = { day: "", startMs: 0, endMs: 0 };

/** `YYYY-MM-DD` of the UTC day containing `ms` (asked on every `/v1/track`: cached until the day turns). */
export function dayOf(ms: number): string {
  if (ms >= lastDay.startMs && ms < lastDay.endMs) return lastDay.day;
  const d = new Date(ms);
  const startMs = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  lastDay = { day: d.toISOString().slice(0, 10), startMs, endMs: startMs + 86_400_000 };
  return lastDay.day;
}

/** Units per month row (`account period`) and day: the shape of the units a process owes back. */
export type DayUnits = Map<string, Map<string, number>>;

/** Adds `n` units (negative: removes) for `day` of row `k`; empty entries go. */
export function addUnits(m: DayUnits, k: string, day: string, n: number): void {
  const days = m.get(k) ?? new Map<string, number>();
  const v = (days.get(day) ?? 0) + n;
  if (v === 0) days.delete(day);
  else days.set(day, v);
  if (days.size === 0) m.delete(k);
  else m.set(k, days);
}

/** All units of row `k`, every day. */
export function unitsOf(m: DayUnits, k: string): number {
  let n = 0;
  for (const v of m.get(k)?.values() ?? []) n += v;
  return n;
}

/** One UTC day's (`YYYY-MM-DD`) counted units. */
export interface DayUsage {
  day: string;
  used: number;
}

/** Units counted per UTC day of the month containing `nowMs` (ms), the 1st to today, days without use as 0. */
export async function usageByDay(db: DbOrTx, accountId: string, nowMs: number): Promise<DayUsage[]> {
  const d = new Date(nowMs);
  const first = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const rows = await db
    .select({ day: usageDaily.day, used: usageDaily.used })
    .from(usageDaily)
    .where(and(eq(usageDaily.accountId, accountId), gte(usageDaily.day, iso(first)), lt(usageDaily.day, iso(end))));
  const byDay = new Map(rows.map((r) => [r.day, r.used]));
  const out: DayUsage[] = [];
  for (let ms = first; ms <= nowMs && ms < end; ms += 86_400_000)
    out.push({ day: iso(ms), used: byDay.get(iso(ms)) ?? 0 });
  return out;
}
