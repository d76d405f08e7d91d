/**
 * `bun run bench:scale [--n 1000000]` — what a large customer base costs (docs/capacity.md).
 *
 * 1. Generates N followed shipments with COPY (default 1M; `--n 10000000` when asked) across 100 accounts with a
 *    realistic state mix (below), their events (by state: the changes a shipment has had) and one outbox row per
 *    event (one live webhook per account, delivered). Active shipments (not delivered, returned or cancelled) are
 *    in the re-check schedule: 90 % due in the past hour (the backlog the claim walks), the rest over the next 8 hours.
 * 2. Claim cost of 1,000 due re-checks at 10k and at N (bench/recheck.ts `claimCost`): time and plan.
 * 3. Rows and bytes per million shipments for each table and index (pg_total_relation_size, pg_relation_size).
 * 4. Sustained re-checks per second through the sandbox at 0 ms latency with 1 and 2 worker processes (each its
 *    own Bun process, pool, simulator and runner; `--seconds`, default 20), and WAL per million re-checks
 *    (pg_current_wal_lsn before and after).
 *    The API's P1/P2 (bench/scale-api.ts) are measured while the 2 workers run.
 * 5. Prune cost: the oldest weekly partition's rows by housekeeping's batched DELETEs (at most `--prune-batches`
 *    statements of 5,000 rows each), then dropping the two oldest weeks whole; time and WAL of each.
 *
 * Uses a throw-away database from test/helpers/db.ts (TEST_PG_URL; `--keep` leaves it) and the simulator on loopback.
 */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { loadConfig } from "../src/configure.ts";
import { connect } from "../src/db/client.ts";
import { systemClock } from "../src/lib/clock.ts";
import { silentLogger } from "../src/lib/log.ts";
import { createCourierBackends } from "../src/modules/couriers/registry.ts";
import { createRecheckRunner } from "../src/modules/following/recheck.ts";
import { createPartitions, rangePartitions } from "../src/db/partitions.ts";
import { eventPartitions, pruneEvents } from "../src/modules/following/prune.ts";
import { deliveryPartitions, pruneDeliveries } from "../src/modules/webhooks/prune.ts";
import { outboxEventSink } from "../src/modules/webhooks/delivery/outbox.ts";
import { startSimulator } from "../src/sandbox/server.ts";
import { createTestDatabase } from "../test/helpers/db.ts";
import { claimCost } from "./recheck.ts";
import { startApi, type ApiFigures } from "./scale-api.ts";

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const fmt = (n: number, d = 1) => n.toLocaleString("en-US", { maximumFractionDigits: d });

/** State mix of followed shipments (share, events so far), from the re-check model in docs/capacity.md. */
const MIX: { state: string; share: number; events: string[]; terminal: boolean }[] = [
  { state: "pending", share: 0.1, events: [], terminal: false },
  { state: "in_transit", share: 0.45, events: ["tracking.in_transit"], terminal: false },
  {
    state: "out_for_delivery",
    share: 0.08,
    events: ["tracking.in_transit", "tracking.out_for_delivery"],
    terminal: false,
  },
  { state: "exception", share: 0.05, events: ["tracking.in_transit", "tracking.exception"], terminal: false },
  {
    state: "delivered",
    share: 0.29,
    events: ["tracking.in_transit", "tracking.out_for_delivery", "tracking.delivered"],
    terminal: true,
  },
  {
    state: "returned",
    share: 0.03,
    events: ["tracking.in_transit", "tracking.exception", "tracking.returned"],
    terminal: true,
  },
];
const COURIERS = ["delhivery", "bluedart", "dtdc", "ecomexpress", "xpressbees"];
/** Numbers valid for each courier's format, ending in 1 (sandbox: in transit). */
const awb = (slug: string, i: number) => {
  const d = { delhivery: 12, bluedart: 10, dtdc: 10, ecomexpress: 11, xpressbees: 13 }[slug]!;
  return `${String(i).padStart(d, "0")}1`;
};
const ACCOUNTS = 100;

function stateOf(i: number) {
  let x = ((i * 2654435761) % 1000) / 1000;
  for (const m of MIX) {
    x -= m.share;
    if (x < 0) return m;
  }
  return MIX[1]!;
}

function checkpoint(state: string, at: string) {
  return {
    state,
    subStatus: null,
    activity: `Shipment ${state.replace(/_/g, " ")}`,
    location: "Bhiwandi Hub, Maharashtra",
    localDate: at.slice(0, 10),
    localTime: at.slice(11, 16),
    at,
    rawCode: "UD",
    rawStatus: state,
    remark: null,
  };
}

/** COPY rows from a generator of tab-separated lines, in chunks. */
async function copy(
  sql: ReturnType<typeof connect>["sql"],
  target: string,
  lines: () => Generator<string>,
): Promise<number> {
  const t = performance.now();
  const stream = await sql.unsafe(`copy ${target} from stdin`).writable();
  async function* chunks() {
    let buf: string[] = [];
    for (const l of lines()) {
      buf.push(l);
      if (buf.length === 5_000) yield buf.join("\n") + "\n", (buf = []);
    }
    if (buf.length) yield buf.join("\n") + "\n";
  }
  await pipeline(Readable.from(chunks()), stream);
  return performance.now() - t;
}

export async function generate(
  sql: ReturnType<typeof connect>["sql"],
  from: number,
  to: number,
  nowMs: number,
): Promise<void> {
  const iso = (ms: number) => new Date(ms).toISOString();
  const sid = (i: number) => `shp_scale${String(i).padStart(22, "0")}`;
  const ms = await copy(
    sql,
    "shipments (id, courier, tracking_number, state, most_recent_status, checkpoints, checkpoint_count, origin_city, destination_city, terminal, followers, last_checked_at, created_at, updated_at)",
    function* () {
      for (let i = from; i < to; i++) {
        const m = stateOf(i);
        const slug = COURIERS[i % COURIERS.length]!;
        const created = nowMs - (i % 20) * 86_400_000 - 3_600_000;
        const cps = [
          checkpoint("pending", iso(created)),
          ...m.events.map((e, k) => checkpoint(e.slice(9), iso(created + (k + 1) * 86_400_000))),
        ];
        const json = JSON.stringify(cps).replace(/\\/g, "\\\\");
        yield [
          sid(i),
          slug,
          awb(slug, i),
          m.state,
          m.state,
          json,
          cps.length,
          "Mumbai",
          "Pune",
          m.terminal ? "t" : "f",
          1,
          iso(nowMs - 3_600_000),
          iso(created),
          iso(nowMs - 3_600_000),
        ].join("\t");
      }
    },
  );
  console.log(`  shipments ${fmt(to - from, 0)} in ${fmt(ms / 1000)} s`);
  await copy(sql, "follows (account_id, shipment_id, created_at)", function* () {
    for (let i = from; i < to; i++) yield `acc_scale${i % ACCOUNTS}\t${sid(i)}\t${iso(nowMs - (i % 20) * 86_400_000)}`;
  });
  await copy(sql, "recheck_queue (shipment_id, courier, tracking_number, due_at)", function* () {
    for (let i = from; i < to; i++) {
      if (stateOf(i).terminal) continue;
      const slug = COURIERS[i % COURIERS.length]!;
      // 90 % due in the past hour (a backlog the claims walk, as in bench/recheck.ts), the rest over the next 8 hours.
      const due = i % 10 < 9 ? nowMs - 60_000 - ((i * 7919) % 3_600) * 1000 : nowMs + ((i * 7919) % 28_800) * 1000;
      yield `${sid(i)}\t${slug}\t${awb(slug, i)}\t${iso(due)}`;
    }
  });
  const evId = (i: number, k: number) => `evt_scale${String(i).padStart(20, "0")}${k}`;
  await copy(sql, "events (id, shipment_id, type, status, enqueued_at, created_at)", function* () {
    for (let i = from; i < to; i++) {
      const created = nowMs - (i % 20) * 86_400_000 - 3_600_000;
      for (const [k, e] of stateOf(i).events.entries()) {
        const at = iso(Math.min(nowMs - 60_000, created + (k + 1) * 86_400_000));
        yield `${evId(i, k)}\t${sid(i)}\t${e}\t${e.slice(9)}\t${at}\t${at}`;
      }
    }
  });
  await copy(
    sql,
    "deliveries (id, webhook_id, account_id, event_id, shipment_id, event_type, mode, state, attempts, enqueued_at, last_status_code, created_at, updated_at)",
    function* () {
      for (let i = from; i < to; i++) {
        const created = nowMs - (i % 20) * 86_400_000 - 3_600_000;
        for (const [k, e] of stateOf(i).events.entries()) {
          const at = iso(Math.min(nowMs - 60_000, created + (k + 1) * 86_400_000));
          yield `dlv_scale${String(i).padStart(20, "0")}${k}\twh_scale${i % ACCOUNTS}\tacc_scale${i % ACCOUNTS}\t${evId(i, k)}\t${sid(i)}\t${e}\tlive\tdelivered\t1\t${at}\t200\t${at}\t${at}`;
        }
      }
    },
  );
  await sql`analyze`;
}

/** One worker process: a runner on its own pool and simulator (0 ms) for `seconds`; prints its stats as JSON. */
async function worker(url: string, seconds: number): Promise<void> {
  const { db, sql } = connect(url, { max: 10 });
  const config = loadConfig({ COURIER_MODE: "sandbox" });
  const sim = startSimulator({
    clock: systemClock,
    stepSeconds: config.sandboxStepSeconds,
    asyncSeconds: config.sandboxAsyncSeconds,
  });
  const backends = createCourierBackends({ config, clock: systemClock, log: silentLogger, simulator: sim, db });
  const runner = createRecheckRunner({
    config,
    db,
    clock: systemClock,
    log: silentLogger,
    backends,
    onEvents: outboxEventSink,
  });
  const drained = runner.drain();
  await Bun.sleep(seconds * 1000);
  await runner.stop({ timeout: 15_000 });
  const s = await drained;
  console.log(JSON.stringify({ done: s.changed + s.unchanged + s.failed, failed: s.failed }));
  await backends.close();
  await sim.stop();
  await sql.end({ timeout: 5 });
}

export async function sustained(
  url: string,
  sql: ReturnType<typeof connect>["sql"],
  workers: number,
  seconds: number,
  during?: () => Promise<ApiFigures>,
) {
  // Everything active due now, so the runners never run dry.
  await sql`update recheck_queue set due_at = now() - interval '1 minute', lease_until = null, lease_owner = null`;
  await sql`checkpoint`;
  // Cluster-wide: other databases' writes on the same server count too (docs/capacity.md says how it was measured).
  const [w0] = await sql`select pg_current_wal_lsn() as lsn`;
  const t = performance.now();
  const procs = Array.from({ length: workers }, () =>
    Bun.spawn(["bun", import.meta.path, "--worker", url, "--seconds", String(seconds)], {
      stdout: "pipe",
      stderr: "inherit",
    }),
  );
  // The API is measured once the workers are past their start-up.
  const api = during ? Bun.sleep(3_000).then(during) : undefined;
  const outs = await Promise.all(
    procs.map(
      async (p) =>
        JSON.parse((await new Response(p.stdout).text()).trim().split("\n").at(-1)!) as {
          done: number;
          failed: number;
        },
    ),
  );
  const secs = (performance.now() - t) / 1000;
  const [w1] = await sql`select pg_wal_lsn_diff(pg_current_wal_lsn(), ${w0!.lsn}::pg_lsn)::float8 as bytes`;
  const done = outs.reduce((a, o) => a + o.done, 0);
  return {
    done,
    perS: done / seconds,
    wallS: secs,
    walPerMillionGiB: ((Number(w1!.bytes) / Math.max(1, done)) * 1e6) / 2 ** 30,
    failed: outs.reduce((a, o) => a + o.failed, 0),
    api: await api,
  };
}

async function sizes(sql: ReturnType<typeof connect>["sql"], n: number) {
  // A partitioned table or index counts the sum of its partitions; a plain one, itself.
  const rows = await sql<{ name: string; kind: string; rows: number; bytes: number }[]>`
    with t(name) as (values ('shipments'), ('follows'), ('recheck_queue'), ('events'), ('deliveries'), ('delivery_queue'), ('delivery_attempts')),
    rels as (select name::regclass as oid, 'table' as kind from t
             union all select x.indexrelid::regclass, 'index' from pg_index x join t on x.indrelid = t.name::regclass)
    select r.oid::text as name, r.kind,
           (select coalesce(sum(greatest(c.reltuples, 0)), 0) from (select relid from pg_partition_tree(r.oid) where isleaf union all select r.oid where not exists (select 1 from pg_partition_tree(r.oid))) p join pg_class c on c.oid = p.relid)::float8 as rows,
           (select coalesce(sum(case r.kind when 'index' then pg_relation_size(p.relid) else pg_total_relation_size(p.relid) end), 0)
              from (select relid from pg_partition_tree(r.oid) where isleaf union all select r.oid where not exists (select 1 from pg_partition_tree(r.oid))) p)::float8 as bytes
    from rels r order by r.kind desc, bytes desc`;
  const per = 1e6 / n;
  for (const r of rows)
    console.log(
      `  ${r.kind.padEnd(5)} ${r.name.padEnd(36)} ${fmt(Number(r.rows) * per, 0).padStart(12)} rows/M ${fmt((Number(r.bytes) * per) / 2 ** 20, 0).padStart(8)} MiB/M`,
    );
  const [db] = await sql`select pg_database_size(current_database())::float8 as b`;
  console.log(
    `  database total ${fmt(Number(db!.b) / 2 ** 30, 2)} GiB at ${fmt(n, 0)} shipments = ${fmt((Number(db!.b) * per) / 2 ** 30, 2)} GiB per million`,
  );
}

/**
 * Prune cost, row by row against whole partitions: the oldest week's final outbox rows and events by housekeeping's
 * batched DELETEs (the week after it holds the cutoff, so it waits), at most `maxBatches` statements per table,
 * then the two oldest weeks dropped whole. Time and WAL of each, per million rows.
 */
async function pruneCost(tdb: Awaited<ReturnType<typeof createTestDatabase>>, maxBatches: number) {
  const sql = tdb.sql;
  const counts = async (t: string) => {
    const out: { name: string; toMs: number; rows: number }[] = [];
    for (const p of await rangePartitions(sql, t))
      out.push({ ...p, rows: Number((await sql.unsafe(`select count(*)::float8 as n from "${p.name}"`))[0]!.n) });
    return out.filter((p) => p.rows > 0);
  };
  const wal = async () => Number((await sql`select pg_current_wal_lsn() - '0/0'::pg_lsn as b`)[0]!.b);
  const [d, e] = [await counts("deliveries"), await counts("events")];
  const oldest = Math.min(d[0]!.toMs, e[0]!.toMs);
  let [w0, t0] = [await wal(), performance.now()];
  const pd = await pruneDeliveries(tdb.db, oldest, { batchSize: 5_000, maxBatches });
  const pe = await pruneEvents(tdb.db, oldest, { batchSize: 5_000, maxBatches });
  const rows = pd.deliveries + pe;
  const [delS, delWal] = [(performance.now() - t0) / 1000, (await wal()) - w0];
  console.log(
    `prune by batched DELETE (5,000 a statement): ${fmt(pd.deliveries, 0)} outbox rows + ${fmt(pe, 0)} events in ${fmt(delS, 2)} s = ${fmt((delS / rows) * 1e6, 1)} s and ${fmt(((delWal / rows) * 1e6) / 2 ** 20, 0)} MiB WAL per million rows`,
  );
  const second = Math.max(d[1]?.toMs ?? 0, e[1]?.toMs ?? 0);
  const left = [...d, ...e].filter((p) => p.toMs <= second).reduce((a, p) => a + p.rows, 0) - rows;
  [w0, t0] = [await wal(), performance.now()];
  const dropped = [
    ...(await deliveryPartitions(tdb.db, Date.now(), second)).dropped,
    ...(await eventPartitions(tdb.db, Date.now(), second)).dropped,
  ];
  const [dropS, dropWal] = [(performance.now() - t0) / 1000, (await wal()) - w0];
  console.log(
    `prune by dropping partitions: ${dropped.length} partitions (${dropped.join(", ")}) holding ${fmt(left, 0)} rows in ${fmt(dropS * 1000, 0)} ms, ${fmt(dropWal / 1024, 0)} KiB WAL`,
  );
}

async function accountsAndWebhooks(sql: ReturnType<typeof connect>["sql"]) {
  await sql`insert into accounts (id, email, plan) select 'acc_scale' || i, 'scale' || i || '@example.com', 'business' from generate_series(0, ${ACCOUNTS - 1}) i`;
  await sql`insert into webhooks (id, account_id, url, events, mode) select 'wh_scale' || i, 'acc_scale' || i, 'https://hooks.example.com/scale', array['tracking.updated'], 'live' from generate_series(0, ${ACCOUNTS - 1}) i`;
}

/** The claim on a separate 10k database and at N, interleaved (3 rounds of 2 claims each), so load changes weigh on both alike. */
async function interleavedClaims(tdb: Awaited<ReturnType<typeof createTestDatabase>>, n: number) {
  const ten = await createTestDatabase({ max: 10 });
  try {
    await accountsAndWebhooks(ten.sql);
    await generate(ten.sql, 0, 10_000, Date.now());
    const [a, b] = [[] as number[], [] as number[]];
    for (let r = 0; r < 3; r++) {
      const c10k = await claimCost(ten, 2);
      const cN = await claimCost(tdb, 2);
      a.push(c10k.min_ms, c10k.max_ms);
      b.push(cN.min_ms, cN.max_ms);
    }
    const med = (x: number[]) => x.sort((p, q) => p - q)[x.length >> 1]!;
    console.log(
      `claim 1,000 due, interleaved with a 10k database: median ${med(a)} ms at 10,000, ${med(b)} ms at ${fmt(n, 0)}; ratio ${fmt(med(b) / med(a), 2)}`,
    );
  } finally {
    await ten.drop();
  }
}

async function main(): Promise<void> {
  const n = arg("n", 1_000_000);
  const seconds = arg("seconds", 20);
  const tdb = await createTestDatabase({ max: 10 });
  const sql = tdb.sql;
  const nowMs = Date.now();
  const [v] = await sql`show server_version`;
  console.log(
    `bench:scale — N ${fmt(n, 0)}, PostgreSQL ${v!.server_version}, ${navigator.hardwareConcurrency} cores, ${fmt(require("node:os").totalmem() / 2 ** 30, 0)} GiB`,
  );
  try {
    await accountsAndWebhooks(sql);
    // Weekly partitions for the generated history (20 days back), as housekeeping would have created them.
    for (const [t, k] of [
      ["events", "created_at"],
      ["deliveries", "created_at"],
      ["delivery_attempts", "started_at"],
    ] as const)
      await createPartitions(sql, t, k, nowMs, nowMs - 21 * 86_400_000);
    const first = Math.min(n, 10_000);
    await generate(sql, 0, first, nowMs);
    const c10k = await claimCost(tdb, 5); // 6,120 due rows at 10k: room for 5 claims
    console.log(
      `claim 1,000 due at 10,000: median ${c10k.median_ms} ms (${c10k.index}; ${c10k.plan.buffers_read} buffers read)`,
    );
    const t = performance.now();
    if (n > first) await generate(sql, first, n, nowMs);
    console.log(`generated ${fmt(n, 0)} shipments in ${fmt((performance.now() - t) / 1000)} s`);
    const cold = await claimCost(tdb, 9);
    console.log(
      `claim 1,000 due at ${fmt(n, 0)}, right after the load: median ${cold.median_ms} ms (${cold.index}; ${cold.plan.buffers_read} buffers read); ratio ${fmt(cold.median_ms / c10k.median_ms, 2)}`,
    );
    // Steady state: claims run every few hundred ms, so the schedule's pages stay in memory (the OS cache).
    await sql`create extension if not exists pg_prewarm`;
    await sql`select pg_prewarm(c.oid, 'read') from pg_class c where c.relname like 'recheck_queue%'`;
    const cN = await claimCost(tdb, 9);
    console.log(
      `claim 1,000 due at ${fmt(n, 0)}, schedule in memory: median ${cN.median_ms} ms (${cN.index}; ${cN.plan.buffers_read} buffers read); ratio ${fmt(cN.median_ms / c10k.median_ms, 2)}`,
    );
    await interleavedClaims(tdb, n);
    console.log(`rows and bytes per million shipments:`);
    await sizes(sql, n);
    const api = await startApi(tdb.url, sql);
    try {
      for (const w of [1, 2]) {
        const s = await sustained(
          tdb.url,
          sql,
          w,
          seconds,
          w === 2 ? () => api.measure(Math.max(6, seconds - 8)) : undefined,
        );
        console.log(
          `sustained re-checks, ${w} worker process(es), sandbox 0 ms, ${seconds} s: ${fmt(s.done, 0)} = ${fmt(s.perS)} /s (failed ${s.failed}); WAL ${fmt(s.walPerMillionGiB, 2)} GiB per million re-checks`,
        );
        if (s.api) {
          const a = s.api;
          console.log(
            `API while ${w} workers run: bare Elysia hello ${fmt(a.hello, 0)} req/s, /v1/couriers ${fmt(a.couriers, 0)}, /v1/track (delivered) ${fmt(a.track, 0)}; P1 ${fmt(a.p1, 3)}, P2 ${fmt(a.p2, 3)}`,
          );
        }
      }
    } finally {
      await api.stop();
    }
    await pruneCost(tdb, arg("prune-batches", 100));
  } finally {
    if (process.argv.includes("--keep")) console.log(`kept database ${tdb.name}`);
    else await tdb.drop();
  }
}

if (import.meta.main) {
  if (process.argv.includes("--worker"))
    await worker(process.argv[process.argv.indexOf("--worker") + 1]!, arg("seconds", 20));
  else await main();
}
