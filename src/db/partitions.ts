/**
 * Weekly range partitions of the history tables (`events`, `deliveries`, `delivery_attempts`; migration 0022,
 * docs/capacity.md "Partitioned history"): created ahead, and dropped whole once past retention. Each module
 * calls these for the tables it owns (docs/spec-map.md, "Table owners"); housekeeping calls the modules.
 */
import type postgres from "postgres";

const DAY_MS = 86_400_000;
/** Partition width: Monday 00:00 UTC to the next (date_trunc('week', …, 'UTC')). */
export const PARTITION_MS = 7 * DAY_MS;
/** Weeks created ahead of the current one. */
const WEEKS_AHEAD = 3;
const PARTITION_LOCK = 727_003;

/** Runs `ddl`; a lock not granted within its `lock_timeout` (55P03) is `false`: the next run tries again. */
async function orSkip(ddl: () => Promise<boolean>): Promise<boolean> {
  return ddl().catch((e: { code?: string }) => {
    if (e.code === "55P03") return false;
    throw e;
  });
}

/** One range partition: [fromMs, toMs), ms since the epoch; `fromMs` null for MINVALUE (a migrated old table). */
export interface RangePartition {
  name: string;
  fromMs: number | null;
  toMs: number;
}

/** Monday 00:00 UTC of the week holding `ms` (1970-01-05 was a Monday). */
export function weekStart(ms: number): number {
  return Math.floor((ms - 4 * DAY_MS) / PARTITION_MS) * PARTITION_MS + 4 * DAY_MS;
}

/** The range partitions of `parent` (not DEFAULT), oldest first. */
export async function rangePartitions(sql: postgres.Sql, parent: string): Promise<RangePartition[]> {
  const rows = await sql<{ name: string; from_ms: number | null; to_ms: number }[]>`
    select name,
           (extract(epoch from substring(b from 'FROM [(]''([^'']+)''[)]')::timestamptz) * 1000)::float8 as from_ms,
           (extract(epoch from substring(b from 'TO [(]''([^'']+)''[)]')::timestamptz) * 1000)::float8 as to_ms
    from (select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as b
          from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = ${parent}::regclass) p
    where b <> 'DEFAULT'
    order by to_ms`;
  return rows.map((r) => ({
    name: r.name,
    fromMs: r.from_ms == null ? null : Number(r.from_ms),
    toMs: Number(r.to_ms),
  }));
}

/**
 * Creates the weekly partitions of `parent` (partition column `key`) from the week of `fromMs` through
 * {@link WEEKS_AHEAD} weeks after that of `nowMs`, except weeks already covered, weeks in which `<parent>_default`
 * holds rows, and weeks whose locks wait over 2 s. Returns the partitions created.
 * @throws whatever else the database throws.
 */
export async function createPartitions(
  sql: postgres.Sql,
  parent: string,
  key: string,
  nowMs: number,
  fromMs = nowMs,
): Promise<string[]> {
  const have = await rangePartitions(sql, parent);
  const created: string[] = [];
  for (let lo = weekStart(fromMs); lo <= weekStart(nowMs) + WEEKS_AHEAD * PARTITION_MS; lo += PARTITION_MS) {
    const hi = lo + PARTITION_MS;
    if (have.some((p) => (p.fromMs ?? -Infinity) < hi && p.toMs > lo)) continue;
    const [from, to] = [new Date(lo).toISOString(), new Date(hi).toISOString()];
    const made = await orSkip(() =>
      sql.begin(async (tx) => {
        await tx`set local lock_timeout = '2s'`;
        await tx`select pg_advisory_xact_lock(${PARTITION_LOCK})`;
        const [busy] = await tx.unsafe(
          `select 1 from "${parent}_default" where "${key}" >= $1 and "${key}" < $2 limit 1`,
          [from, to],
        );
        if (busy) return false;
        await tx`select history_partition_create(${parent}, ${from}::timestamptz, ${to}::timestamptz)`;
        return true;
      }),
    );
    if (made) created.push(`${parent}_p${from.slice(0, 10).replaceAll("-", "")}`);
  }
  return created;
}

/**
 * Drops the partitions of `parent` that end at or before `cutoffMs`, except one holding a row that `mustStay` (an
 * SQL condition, `$1` = the cutoff) matches and one whose locks wait over 2 s (no writer queues behind a long query).
 * Returns the partitions dropped.
 * @throws whatever else the database throws.
 */
export async function dropPartitionsBefore(
  sql: postgres.Sql,
  parent: string,
  cutoffMs: number,
  mustStay?: string,
): Promise<string[]> {
  const cutoff = new Date(cutoffMs).toISOString();
  const dropped: string[] = [];
  for (const p of await rangePartitions(sql, parent)) {
    if (p.toMs > cutoffMs) break;
    const ok = await orSkip(() =>
      sql.begin(async (tx) => {
        await tx`set local lock_timeout = '2s'`;
        await tx`select pg_advisory_xact_lock(${PARTITION_LOCK})`;
        if (mustStay && (await tx.unsafe(`select 1 from "${p.name}" where ${mustStay} limit 1`, [cutoff])).length > 0)
          return false;
        await tx.unsafe(`drop table if exists "${p.name}"`);
        return true;
      }),
    );
    if (ok) dropped.push(p.name);
  }
  return dropped;
}

/**
 * Upper bound (ms) for row-by-row retention deletes on `parent`: the start of the partition holding `cutoffMs`
 * (its rows wait for the drop), or the cutoff when none does or that one is a migrated old table (MINVALUE).
 */
export async function rowPruneBound(sql: postgres.Sql, parent: string, cutoffMs: number): Promise<number> {
  const holding = (await rangePartitions(sql, parent)).find(
    (p) => (p.fromMs ?? -Infinity) <= cutoffMs && cutoffMs < p.toMs,
  );
  return holding?.fromMs ?? cutoffMs;
}
