/**
 * The delivery claim and the statements after it over weekly partitions (docs/webhooks.md, "The worker"): with
 * 10 partitions of the outbox, every lookup of a delivery reaches ONE partition — the claim's plan is a nested loop
 * whose (id, created_at) prunes per queue row, the same with stale statistics, fresh ones and a generic plan — and
 * an outcome or a release scans only the partitions holding its rows; a database from before the partition key is
 * carried forward. Plan shapes and scan counts, never timings.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { connect } from "../../src/db/client.ts";
import { MIGRATIONS_FOLDER, migrateDatabase } from "../../src/db/migrate.ts";
import { createPartitions, PARTITION_MS, weekStart } from "../../src/db/partitions.ts";
import { frag, run } from "../../src/jobs/fragment.ts";
import {
  claimDue,
  recordOutcomes,
  releaseLeases,
  type ClaimedDelivery,
} from "../../src/modules/webhooks/delivery/outbox.ts";
import { claimStatement } from "../../src/modules/webhooks/delivery/claim.ts";
import { ADMIN_URL, createTestDatabase, type TestDatabase } from "../helpers/db.ts";

let tdb: TestDatabase;
const now = Date.now();
const iso = (ms: number) => new Date(ms).toISOString();
const ROWS = 30_000;
const PENDING_EVERY = 100;

/** Outbox rows spread over the 7 weeks up to now, 1 in 100 pending and due; `from..to` of the i series. */
async function load(from: number, to: number) {
  await tdb.sql`
    insert into deliveries (id, webhook_id, account_id, shipment_id, event_type, mode, state, attempts, next_attempt_at,
      enqueued_at, created_at, updated_at)
    select 'dlv_part' || lpad(i::text, 8, '0'), 'wh_part', 'acc_part', 'shp_part', 'tracking.updated', 'live',
      case when i % ${PENDING_EVERY} = 0 then 'pending' else 'delivered' end, 1,
      case when i % ${PENDING_EVERY} = 0 then ${iso(now)}::timestamptz - (i % 997) * interval '1 second' end, t, t, t
    from generate_series(${from}::int, ${to}::int) i,
      lateral (select ${iso(now)}::timestamptz - (i % 7) * interval '7 days' - (i % 1000) * interval '1 minute' as t) x`;
}

beforeAll(async () => {
  tdb = await createTestDatabase({ max: 4 });
  await tdb.sql`insert into accounts (id, email, plan) values ('acc_part', 'part@example.com', 'business')`;
  await tdb.sql`insert into webhooks (id, account_id, url, events, mode) values ('wh_part', 'acc_part', 'https://127.0.0.1:9/p', array['tracking.updated'], 'live')`;
  await tdb.sql`insert into shipments (id, courier, tracking_number) values ('shp_part', 'delhivery', '12345678901')`;
  await tdb.sql`insert into follows (account_id, shipment_id) values ('acc_part', 'shp_part')`;
  // Six weeks back, this one and three ahead: the partitions a month-old database holds.
  await createPartitions(tdb.sql, "deliveries", "created_at", now, weekStart(now) - 6 * PARTITION_MS);
  // Statistics of a young database (a few hundred rows), then the month loaded with autovacuum off: stale.
  await load(1, 700);
  await tdb.sql`analyze`;
  for (const t of [...(await partitions()), "delivery_queue"])
    await tdb.sql.unsafe(`alter table "${t}" set (autovacuum_enabled = false)`);
  await load(701, ROWS);
}, 60_000);
afterAll(async () => {
  await tdb?.drop();
});

async function partitions(): Promise<string[]> {
  const rows =
    await tdb.sql`select inhrelid::regclass::text as t from pg_inherits where inhparent = 'deliveries'::regclass`;
  return rows.map((r) => r.t as string);
}

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Loops"?: number;
  "Actual Rows"?: number;
  Plans?: PlanNode[];
}
const flat = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(flat)];
const isPartition = (n: PlanNode) => n["Relation Name"]?.startsWith("deliveries_") ?? false;

class Rollback extends Error {}

/** The claim of 100 rows under EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON), rolled back; `generic`: a generic plan. */
async function explainClaim(generic = false): Promise<PlanNode> {
  let plan: PlanNode | undefined;
  await tdb.sql
    .begin(async (tx) => {
      if (generic) await tx`set local plan_cache_mode = force_generic_plan`;
      const stmt = claimStatement(now, 100, 60_000, false);
      const [row] = await run(tx as never, frag`explain (analyze, buffers, format json) ${stmt}`);
      const out = row!["QUERY PLAN"];
      plan = (typeof out === "string" ? JSON.parse(out) : out)[0].Plan as PlanNode;
      throw new Rollback();
    })
    .catch((e) => {
      if (!(e instanceof Rollback)) throw e;
    });
  return plan!;
}

/** Every delivery lookup in `plan` reaches one partition per execution; returns the partitions it read. */
function expectPruned(plan: PlanNode): Set<string> {
  const all = flat(plan);
  const parts = all.filter(isPartition);
  expect(parts.length).toBeGreaterThan(0);
  // Key lookups only: no partition is read whole (a scan never executed may be planned as anything).
  for (const p of parts)
    if ((p["Actual Loops"] ?? 0) > 0) expect(["Index Scan", "Index Only Scan"]).toContain(p["Node Type"]);
  // Never a hash or merge join over the outbox (that reads every partition's key index).
  for (const n of all)
    if (n["Node Type"] === "Hash Join" || n["Node Type"] === "Merge Join")
      expect(flat(n).some(isPartition)).toBe(false);
  // Each execution of an Append over the partitions runs at most one of them: run-time pruning per row.
  const appends = all.filter((n) => n["Node Type"] === "Append" && (n.Plans ?? []).some(isPartition));
  expect(appends.length).toBeGreaterThan(0);
  for (const a of appends) {
    const children = (a.Plans ?? []).filter(isPartition);
    const loops = children.reduce((s, c) => s + (c["Actual Loops"] ?? 0), 0);
    expect(loops).toBeLessThanOrEqual(a["Actual Loops"] ?? 0);
  }
  return new Set(parts.filter((p) => (p["Actual Loops"] ?? 0) > 0).map((p) => p["Relation Name"]!));
}

function expectClaimShape(plan: PlanNode) {
  // 100 rows claimed, found over several partitions (the test means something), each by one partition's key.
  expect(flat(plan).find((n) => n["Node Type"] === "ModifyTable")?.["Actual Rows"]).toBe(100);
  expect(expectPruned(plan).size).toBeGreaterThanOrEqual(5);
  // By its primary key (id, created_at): an index on created_at alone reads every row of that instant (the
  // deliveries of one event's fan-out share it) and every dead version of them.
  const lookups = flat(plan).filter((n) => isPartition(n) && (n["Actual Loops"] ?? 0) > 0);
  expect(lookups.map((n) => n["Index Name"]?.endsWith("_pkey"))).toEqual(lookups.map(() => true));
}

/** Index and sequential scans of each outbox partition in the current transaction. */
async function scans(tx: { unsafe: TestDatabase["sql"]["unsafe"] }): Promise<Map<string, number>> {
  const rows = await tx.unsafe(`
    select c.relname as t,
      (pg_stat_get_xact_numscans(c.oid) + coalesce(sum(pg_stat_get_xact_numscans(i.indexrelid)), 0))::int as n
    from pg_inherits h join pg_class c on c.oid = h.inhrelid left join pg_index i on i.indrelid = c.oid
    where h.inhparent = 'deliveries'::regclass
    group by c.relname, c.oid`);
  return new Map(rows.map((r) => [r.t as string, Number(r.n)]));
}

async function partitionOf(rows: ClaimedDelivery[]): Promise<Set<string>> {
  const got =
    await tdb.sql`select distinct tableoid::regclass::text as t from deliveries where id = any(${rows.map((r) => r.id)}::text[])`;
  return new Set(got.map((r) => r.t as string));
}

/**
 * Runs `f` in a transaction; the outbox partitions it scanned and how often in all (counts pending in this backend).
 * On a database this small the planner may read a few partitions whole instead of probing per row (cheaper here);
 * sequential scans are off so that what is tested is the lookups the statement allows.
 */
async function scanned(f: (tx: never) => Promise<unknown>): Promise<{ touched: Set<string>; total: number }> {
  return tdb.sql.begin(async (tx) => {
    await tx`set local enable_seqscan = off`;
    const before = await scans(tx);
    await f(tx as never);
    const diff = [...(await scans(tx))].map(([t, n]) => [t, n - (before.get(t) ?? 0)] as const);
    const touched = new Set(diff.filter(([, n]) => n > 0).map(([t]) => t));
    return { touched, total: diff.reduce((s, [, n]) => s + n, 0) };
  }) as Promise<{ touched: Set<string>; total: number }>;
}

describe("the delivery claim over 10 weekly partitions", () => {
  test("the data spans 10 partitions and a queue row carries its delivery's partition key", async () => {
    expect((await partitions()).length).toBeGreaterThanOrEqual(10);
    const [q] = await tdb.sql`
      select count(*)::int as n, count(*) filter (where q.created_at = d.created_at)::int as same
      from delivery_queue q join deliveries d on d.id = q.delivery_id`;
    expect(q).toEqual({ n: ROWS / PENDING_EVERY, same: ROWS / PENDING_EVERY });
  });

  test("stale statistics: a nested loop that prunes to one partition per queue row", async () => {
    expectClaimShape(await explainClaim());
  });

  test("fresh statistics, and a generic plan: the same shape", async () => {
    await tdb.sql`analyze`;
    expectClaimShape(await explainClaim());
    expectClaimShape(await explainClaim(true));
  });

  test("the outcome and the release of claimed rows scan only the partitions holding them, once per row", async () => {
    const claimed = await claimDue(tdb.sql, now, 40, 60_000);
    expect(claimed).toHaveLength(40);
    const [done, back] = [claimed.slice(0, 20), claimed.slice(20)];
    const recorded = await scanned(async (tx) => {
      const r = await recordOutcomes(
        tx,
        done.map((d) => ({
          delivery: d,
          outcome: { state: "delivered", attempts: 2, nextAttemptAt: null, statusCode: 200, error: null, hops: [] },
        })),
        now,
      );
      expect(r.recorded.size).toBe(20);
    });
    const doneParts = await partitionOf(done);
    expect(doneParts.size).toBeGreaterThan(1);
    expect([...recorded.touched].every((t) => doneParts.has(t))).toBe(true);
    expect(recorded.total).toBeLessThanOrEqual(done.length);

    const released = await scanned(async (tx) => expect(await releaseLeases(tx, back)).toBe(20));
    const backParts = await partitionOf(back);
    expect([...released.touched].every((t) => backParts.has(t))).toBe(true);
    expect(released.total).toBeLessThanOrEqual(back.length);
    const [left] = await tdb.sql`
      select count(*) filter (where state = 'delivered')::int as delivered, count(lease_until)::int as leased
      from deliveries where id = any(${claimed.map((c) => c.id)}::text[])`;
    expect(left).toEqual({ delivered: 20, leased: 0 });
  });

  test("claimDue runs its statement on a generic plan: it is never planned again over every partition", async () => {
    // One connection, so that pg_prepared_statements (per session) lists the statements claimDue prepared there.
    const { sql } = connect(tdb.url, { max: 1 });
    try {
      for (let k = 0; k < 3; k++) await releaseLeases(sql, await claimDue(sql, now, 5, 60_000));
      const plans = await sql<{ generic: number; custom: number }[]>`
        select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements
        where statement like '%cross join lateral%' and statement not like '%pg_prepared_statements%'`;
      expect([...plans]).toEqual([{ generic: 3, custom: 0 }]);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });
});

describe("migrating a database whose queue rows predate the partition key", () => {
  const name = `ct_t_dq_${Bun.randomUUIDv7().replaceAll("-", "").slice(-12)}`;
  const url = (() => {
    const u = new URL(ADMIN_URL);
    u.pathname = `/${name}`;
    return u.toString();
  })();
  let pool: ReturnType<typeof connect> | undefined;
  afterAll(async () => {
    await pool?.sql.end({ timeout: 5 });
    const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  });

  test("queued rows get their delivery's created_at, a row queued the old way too, and the claim takes them", async () => {
    const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${name}"`);
    await admin.end();
    // The migrations up to partitioned history, the schema the previous release ran on.
    const dir = mkdtempSync(join(tmpdir(), "ct-dq-"));
    cpSync(MIGRATIONS_FOLDER, dir, { recursive: true });
    const journalPath = join(dir, "meta", "_journal.json");
    const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: { tag: string }[] };
    const at = journal.entries.findIndex((e) => e.tag === "0022_partitioned_history");
    expect(at).toBeGreaterThan(0);
    journal.entries = journal.entries.slice(0, at + 1);
    writeFileSync(journalPath, JSON.stringify(journal));
    const old = postgres(url, { max: 1, onnotice: () => {} });
    await migrate(drizzle(old), { migrationsFolder: dir });
    rmSync(dir, { recursive: true, force: true });
    await old`insert into accounts (id, email, plan) values ('acc_dq', 'dq@example.com', 'business')`;
    await old`insert into webhooks (id, account_id, url, events, mode) values ('wh_dq', 'acc_dq', 'https://127.0.0.1:9/q', array['tracking.updated'], 'live')`;
    await old`insert into deliveries (id, webhook_id, account_id, event_type, mode, state, attempts, next_attempt_at, enqueued_at, created_at, updated_at, synthetic_data)
      select 'dlv_dq' || i, 'wh_dq', 'acc_dq', 'tracking.updated', 'test', 'pending', 0, t, t, t, t, '{}'::jsonb
      from generate_series(1, 30) i, lateral (select ${iso(now)}::timestamptz - i * interval '2 days' as t) x`;
    await old.end();

    await migrateDatabase(url);
    pool = connect(url, { max: 2 });
    const sql = pool.sql;
    const [q] = await sql`
      select count(*)::int as n, count(*) filter (where q.created_at = d.created_at)::int as same
      from delivery_queue q join deliveries d on d.id = q.delivery_id`;
    expect(q).toEqual({ n: 30, same: 30 });
    // Code of the previous release queues without the column: the row gets it from its delivery.
    await sql`delete from delivery_queue where delivery_id = 'dlv_dq1'`;
    await sql`insert into delivery_queue (delivery_id, due_at) values ('dlv_dq1', ${iso(now)})`;
    const [one] =
      await sql`select q.created_at = d.created_at as same from delivery_queue q join deliveries d on d.id = q.delivery_id where q.delivery_id = 'dlv_dq1'`;
    expect(one!.same).toBe(true);
    const claimed = await claimDue(sql, now, 100, 60_000);
    expect(claimed.map((c) => c.id).sort()).toEqual(Array.from({ length: 30 }, (_, i) => `dlv_dq${i + 1}`).sort());
  });
});
