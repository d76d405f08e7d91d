/** Reads the summed buckets (every process's calls) into window figures (docs/courier-health.md, "Figures"). */
import { sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import {
  CALL_KINDS,
  emptyCounts,
  figuresOf,
  HEALTH,
  quantileMs,
  type WindowCounts,
  type WindowFigures,
} from "../../domain/courier-health.ts";

const MINUTE_MS = 60_000;
/** The windows the API and the page show, by name, ms. */
const WINDOWS = { "15m": 15 * MINUTE_MS, "1h": 60 * MINUTE_MS, "24h": 24 * 60 * MINUTE_MS } as const;
export type WindowName = keyof typeof WINDOWS;

/** The start of the minute of `ms`: windows end at the last complete minute (the current one is still in memory). */
export const minuteOf = (ms: number) => Math.floor(ms / MINUTE_MS) * MINUTE_MS;

/**
 * Calls summed per courier (and per `step` ms slot when given) with minute in [fromMs, toMs). Keys: `courier` or
 * `courier|slotStartMs`. @throws the database's errors.
 */
export async function countsBetween(
  db: DbOrTx,
  fromMs: number,
  toMs: number,
  opts: { courier?: string; stepMs?: number } = {},
): Promise<Map<string, WindowCounts>> {
  const from = new Date(fromMs).toISOString();
  const to = new Date(toMs).toISOString();
  const step = opts.stepMs ? `${Math.round(opts.stepMs / 1000)} seconds` : null;
  const slot = step ? sql`date_bin(${step}::interval, minute, ${from}::timestamptz)` : sql`null::timestamptz`;
  const only = opts.courier ? sql`and courier = ${opts.courier}` : sql``;
  const rows = (await db.execute(sql`
    with b as (select courier, ${slot} as slot, kinds, latency from courier_call_buckets
      where minute >= ${from}::timestamptz and minute < ${to}::timestamptz ${only})
    select courier, slot, 'k' as part, i::int as i, sum(x)::float8 as n from b, unnest(kinds) with ordinality u(x, i) group by 1, 2, 4
    union all
    select courier, slot, 'l', i::int, sum(x)::float8 from b, unnest(latency) with ordinality u(x, i) group by 1, 2, 4
  `)) as unknown as { courier: string; slot: string | Date | null; part: "k" | "l"; i: number; n: number }[];
  const out = new Map<string, WindowCounts>();
  for (const r of rows) {
    const key = r.slot === null ? r.courier : `${r.courier}|${new Date(r.slot).getTime()}`;
    let c = out.get(key);
    if (!c) {
      c = emptyCounts();
      out.set(key, c);
    }
    if (r.part === "k") {
      const kind = CALL_KINDS[r.i - 1];
      if (!kind) continue;
      c.kinds[kind] += r.n;
      c.calls += r.n;
    } else {
      const seen = c.latency[r.i - 1];
      if (seen !== undefined) c.latency[r.i - 1] = seen + r.n;
    }
  }
  return out;
}

/** Each courier's figures over the named windows ending at the minute of `nowMs`. */
export async function windowFigures(
  db: DbOrTx,
  nowMs: number,
  courier?: string,
): Promise<Map<string, Record<WindowName, WindowFigures>>> {
  const end = minuteOf(nowMs);
  const names = Object.keys(WINDOWS) as WindowName[];
  const per = await Promise.all(names.map((n) => countsBetween(db, end - WINDOWS[n], end, { courier })));
  const out = new Map<string, Record<WindowName, WindowFigures>>();
  const couriers = new Set(per.flatMap((m) => [...m.keys()]));
  for (const c of couriers)
    out.set(
      c,
      Object.fromEntries(names.map((n, i) => [n, figuresOf(per[i]?.get(c) ?? emptyCounts())])) as Record<
        WindowName,
        WindowFigures
      >,
    );
  return out;
}

/** Each courier's 7-day p95, ms, over the days before the evaluation window; null below the minimum of calls. */
export async function baselines(db: DbOrTx, nowMs: number): Promise<Map<string, number | null>> {
  const end = minuteOf(nowMs) - HEALTH.windowMs;
  const counts = await countsBetween(db, end - HEALTH.baselineMs, end);
  const out = new Map<string, number | null>();
  for (const [c, n] of counts) out.set(c, n.calls >= HEALTH.baselineMinCalls ? quantileMs(n.latency, 0.95) : null);
  return out;
}

/** The due time of each courier's oldest unclaimed due re-check (how stale its followed shipments are). */
export async function oldestDue(db: DbOrTx, nowMs: number): Promise<Map<string, number>> {
  const now = new Date(nowMs).toISOString();
  const rows = (await db.execute(sql`
    select courier, min(due_at) as due from recheck_queue
    where due_at <= ${now}::timestamptz and (lease_until is null or lease_until <= ${now}::timestamptz)
    group by courier
  `)) as unknown as { courier: string; due: string | Date }[];
  return new Map(rows.map((r) => [r.courier, new Date(r.due).getTime()]));
}
