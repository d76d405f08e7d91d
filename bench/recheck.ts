/**
 * `bun run bench:recheck` — scheduled re-checks.
 *
 * 1. Claim cost vs table size: followed, due shipments built with one
 *    `insert … select generate_series` statement, each with a due time of its
 *    own in `recheck_schedule` (the path of new follows and failures; chunk
 *    runs are measured by `bun run bench:steady`). Each batch's due times rise
 *    with the order it is written in over the past hour, as new follows come:
 *    a row keeps a due time of its own only until its first re-check (docs/
 *    rechecks.md, "Re-checks in chunks"); time to claim 1,000 due
 *    rows (median of BENCH_CLAIMS claims, default 5) at 10k, 100k and
 *    (BENCH_MILLION=0 skips it) 1M rows, which due index the plan walks,
 *    and the heap pages, buffers and WAL one claim costs (EXPLAIN ANALYZE).
 * 2. Sustained re-checks: 100,000 followed shipments spread over five
 *    backends, simulator latency 200 ms, one runner with the default
 *    concurrency (half of COURIER_CONCURRENCY per backend), a bounded run
 *    (BENCH_SECONDS, default 20); re-checks and events (with their outbox
 *    rows: one live webhook follows everything) per second.
 * 3. Event emission without couriers: `recordFetch` on 5,000 pending
 *    shipments with a snapshot that moves them in transit, 20 at a time:
 *    events (+ outbox rows) per second the database sustains.
 *
 * Uses a throw-away database from test/helpers/db.ts (TEST_PG_URL) and the
 * simulator on loopback; nothing leaves the machine.
 *
 * `measure({ sustained, emission, million })` runs the same steps from another
 * script (`bun run bench`) and returns the headline figures.
 */
import type postgres from "postgres";
import { loadConfig } from "../src/configure.ts";
import type { Db } from "../src/db/client.ts";
import { webhooks } from "../src/db/schema/index.ts";
import { systemClock } from "../src/lib/clock.ts";
import { newId } from "../src/lib/ids.ts";
import { silentLogger } from "../src/lib/log.ts";
import { createAccount } from "../src/modules/accounts/service.ts";
import type { TrackingSnapshot } from "../src/domain/checkpoint.ts";
import { courierBySlug } from "../src/modules/couriers/catalogue.ts";
import { createCourierBackends } from "../src/modules/couriers/registry.ts";
import { countDue } from "../src/modules/following/metrics.ts";
import { claimDueShipments, createRecheckRunner, releaseClaims } from "../src/modules/following/recheck.ts";
import { recordFetch } from "../src/modules/following/store.ts";
import { outboxEventSink } from "../src/modules/webhooks/delivery/outbox.ts";
import { startSimulator } from "../src/sandbox/server.ts";
import { createTestDatabase, type TestDatabase } from "../test/helpers/db.ts";

const LATENCY_MS = 200;

export interface RecheckBenchOptions {
  /** Grow to 1M rows and measure the claim there (default true; BENCH_MILLION=0 turns it off). */
  million?: boolean;
  /** Run the sustained re-check step (default true). */
  sustained?: boolean;
  /** Run the event-emission step (default true). */
  emission?: boolean;
  /** Seconds of the sustained step (default BENCH_SECONDS or 20). */
  seconds?: number;
  /** Claims timed per table size (default BENCH_CLAIMS or 5). */
  claims?: number;
  /** Progress lines (default console.log). */
  log?: (line: string) => void;
}

const fmt = (n: number, d = 1) => n.toLocaleString("en-US", { maximumFractionDigits: d });

/**
 * Adds shipments [from, to) in one statement (plus one for their follows and one for their rows in
 * the re-check schedule): five backends in turn, numbers valid for each courier's format ending in 1
 * (sandbox: in transit), stored as pending and last checked, due over the past hour in the order written.
 */
async function grow(sql: postgres.Sql, accountId: string, from: number, to: number): Promise<number> {
  const t = performance.now();
  await sql`
    insert into shipments (id, courier, tracking_number, state, followers, last_checked_at)
    select 'shp_bench' || lpad(i::text, 23, '0'), c.slug,
           case c.slug when 'delhivery' then lpad(i::text, 12, '0') || '1'
                       when 'bluedart' then lpad(i::text, 10, '0') || '1'
                       when 'dhl' then lpad(i::text, 10, '0') || '1'
                       when 'ecomexpress' then lpad(i::text, 11, '0') || '1'
                       else lpad(i::text, 13, '0') || '1' end,
           'pending', 1, now()
    from generate_series(${from}::int, ${to - 1}::int) i
    cross join lateral (select (array['delhivery','bluedart','dhl','ecomexpress','xpressbees'])[1 + i % 5] as slug) c
  `;
  await sql`insert into follows (account_id, shipment_id) select ${accountId}, 'shp_bench' || lpad(i::text, 23, '0') from generate_series(${from}::int, ${to - 1}::int) i`;
  await sql`
    insert into recheck_schedule (shipment_id, courier, tracking_number, due_at)
    select s.id, s.courier, s.tracking_number,
      now() - interval '1 hour' + (i - ${from})::float8 / ${to - from} * interval '1 hour'
    from generate_series(${from}::int, ${to - 1}::int) i join shipments s on s.id = 'shp_bench' || lpad(i::text, 23, '0')
    order by i
  `;
  await sql`analyze shipments`;
  await sql`analyze recheck_schedule`;
  return performance.now() - t;
}

/**
 * A Db whose client prefixes the claim statement with EXPLAIN ANALYZE (inside `tx`, rolled back by the
 * caller): the plan of exactly the statement claimDueShipments sends, collected into `out`.
 */
function explaining(db: Db, tx: postgres.TransactionSql, out: string[]): Db {
  const call = tx as unknown as (...a: unknown[]) => Promise<Record<string, unknown>[]>;
  const client = (strings: TemplateStringsArray | unknown, ...values: unknown[]) => {
    if (!Array.isArray(strings) || !/^\s*update\b/.test(String(strings[0]))) return call(strings, ...values);
    const s = [`explain (analyze, buffers, wal) ${strings[0]}`, ...strings.slice(1)];
    return call(Object.assign(s, { raw: s }), ...values).then(
      (rows) => (out.push(...rows.map((r) => String(r["QUERY PLAN"]))), []),
    );
  };
  // The pool's Drizzle with the intercepting client: the claim reads the layout level through Drizzle first.
  const $client = new Proxy(client, { get: (_t, p) => (tx as unknown as Record<PropertyKey, unknown>)[p] });
  return Object.assign(Object.create(db) as Db, { $client });
}

/** Thrown to roll the explained claim back. */
class Rollback extends Error {}

export interface ClaimCost {
  median_ms: number;
  min_ms: number;
  max_ms: number;
  due_rows: number;
  index: string;
  plan: { pages_dirtied: number; buffers_read: number; wal_fpi: number; wal_mb: number };
}

/** Median time of `n` claims of 1,000 due rows (each given back after), and one claim's plan. */
export async function claimCost(tdb: TestDatabase, n: number): Promise<ClaimCost> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const now = Date.now();
    const t = performance.now();
    const rows = await claimDueShipments(tdb.db, now, 1000, 60_000, "bench-claim");
    times.push(performance.now() - t);
    if (rows.length !== 1000) throw new Error(`claimed ${rows.length}`);
    await releaseClaims(
      tdb.db,
      rows.map((r) => r.id),
      "bench-claim",
      now + 3_600_000,
    );
  }
  times.sort((a, b) => a - b);
  const plan: string[] = [];
  await tdb.sql
    .begin(async (tx) => {
      await claimDueShipments(explaining(tdb.db, tx, plan), Date.now(), 1000, 60_000, "bench-explain");
      throw new Rollback();
    })
    .catch((e) => {
      if (!(e instanceof Rollback)) throw e;
    });
  const text = plan.join("\n");
  const top = plan.slice(0, 3).join(" ");
  const num = (re: RegExp) => Number(re.exec(top)?.[1] ?? 0);
  const index =
    [...new Set([...text.matchAll(/Index Scan using (recheck_schedule_due\w*)/g)].map((m) => m[1]!))].join("+") ||
    "none";
  return {
    median_ms: +times[times.length >> 1]!.toFixed(2),
    min_ms: +times[0]!.toFixed(2),
    max_ms: +times.at(-1)!.toFixed(2),
    due_rows: await countDue(tdb.db, Date.now()),
    index,
    plan: {
      pages_dirtied: num(/dirtied=(\d+)/),
      buffers_read: num(/read=(\d+)/),
      wal_fpi: num(/fpi=(\d+)/),
      wal_mb: +(num(/WAL: .*bytes=(\d+)/) / 1048576).toFixed(1),
    },
  };
}

/**
 * Runs the benchmark steps on a throw-away database and returns the headline figures:
 * claim medians in ms at 10k / 100k / 1M rows and `ratio` = 1M ÷ 10k (or 100k ÷ 10k without the
 * million step), plus re-checks and events per second when those steps run.
 */
export async function measure(opts: RecheckBenchOptions = {}): Promise<Record<string, number>> {
  const log = opts.log ?? console.log;
  const runSeconds = opts.seconds ?? Number(process.env.BENCH_SECONDS ?? 20);
  const claims = opts.claims ?? Number(process.env.BENCH_CLAIMS ?? 5);
  const tdb = await createTestDatabase({ max: 20 });
  const sql = tdb.sql;
  const config = loadConfig({ COURIER_MODE: "sandbox" });
  const sim = startSimulator({
    clock: systemClock,
    stepSeconds: config.sandboxStepSeconds,
    asyncSeconds: config.sandboxAsyncSeconds,
    latencyMs: LATENCY_MS,
  });
  const backends = createCourierBackends({ config, clock: systemClock, log: silentLogger, simulator: sim });
  const deps = { config, db: tdb.db, clock: systemClock, log: silentLogger, backends, onEvents: outboxEventSink };
  const figures: Record<string, unknown> = {};
  const out: Record<string, number> = {};
  try {
    const acc = await createAccount(tdb.db, { email: `bench-recheck-${Date.now()}@example.com`, plan: "growth" });
    await tdb.db.insert(webhooks).values({
      id: newId("wh"),
      accountId: acc.id,
      url: "https://hooks.example.com/bench",
      events: [
        "tracking.updated",
        "tracking.in_transit",
        "tracking.out_for_delivery",
        "tracking.delivered",
        "tracking.exception",
      ],
      mode: "live",
    });
    log(
      `bench:recheck — simulator latency ${LATENCY_MS} ms, COURIER_CONCURRENCY ${config.courierConcurrency}, run ${runSeconds} s`,
    );

    const claimAt = async (size: number, key: string) => {
      const c = await claimCost(tdb, claims);
      figures[`claim_1000_at_${size}`] = c;
      out[key] = c.median_ms;
      log(
        `claim 1,000 due rows at ${fmt(size, 0)} shipments (${fmt(c.due_rows, 0)} due): median ${c.median_ms} ms (min ${c.min_ms}, max ${c.max_ms}); ` +
          `plan walks ${c.index}; one claim: ${c.plan.pages_dirtied} pages dirtied, ${c.plan.buffers_read} buffers read, ${c.plan.wal_fpi} full-page images, ${c.plan.wal_mb} MB WAL`,
      );
    };

    // ---- 1. claim cost at 10k and 100k ----------------------------------------------------------
    log(`built 10,000 shipments in ${fmt(await grow(sql, acc.id, 0, 10_000), 0)} ms`);
    await claimAt(10_000, "claimMs10k");
    log(`grew to 100,000 shipments in ${fmt(await grow(sql, acc.id, 10_000, 100_000), 0)} ms`);
    await claimAt(100_000, "claimMs100k");

    // ---- 2. sustained re-checks on 100k ---------------------------------------------------------
    if (opts.sustained ?? true) {
      const runner = createRecheckRunner(deps);
      const dueBefore = await countDue(tdb.db, Date.now());
      const started = performance.now();
      const drained = runner.drain();
      await Bun.sleep(runSeconds * 1000);
      await runner.stop({ timeout: 15_000 });
      const stats = await drained;
      const secs = (performance.now() - started) / 1000;
      const done = stats.changed + stats.unchanged + stats.failed;
      const events = Object.values(stats.events).reduce((a, b) => a + b, 0);
      const [outbox] = await sql`select count(*)::int as n from deliveries`;
      const rss = process.memoryUsage().rss;
      const perLane = Math.max(1, Math.floor(config.courierConcurrency / 2));
      const ceiling = (5 * perLane * 1000) / LATENCY_MS;
      figures.sustained = {
        seconds: +secs.toFixed(1),
        due_before: dueBefore,
        rechecks: done,
        rechecks_per_s: +(done / secs).toFixed(1),
        failed: stats.failed,
        skipped_or_given_back: stats.skipped,
        events,
        events_per_s: +(events / secs).toFixed(1),
        outbox_rows: outbox!.n,
        per_backend_concurrency: perLane,
        backends: 5,
        ceiling_per_s: ceiling,
        lease_ms: runner.leaseMs,
        rss_mb: Math.round(rss / 1048576),
      };
      out.rechecksPerSec = +(done / secs).toFixed(1);
      log(
        `sustained: ${fmt(done, 0)} re-checks in ${secs.toFixed(1)} s = ${fmt(done / secs)} /s (ceiling ${fmt(ceiling, 0)} /s = 5 backends × ${perLane} in flight / ${LATENCY_MS} ms); ` +
          `${fmt(events, 0)} events = ${fmt(events / secs)} /s, ${fmt(outbox!.n, 0)} outbox rows; failed ${stats.failed}; given back at stop ${stats.skipped}; RSS ${Math.round(rss / 1048576)} MB`,
      );
    }

    // ---- 3. event emission without couriers ------------------------------------------------------
    if (opts.emission ?? true) {
      const EMIT_N = 5_000;
      const pending =
        (await sql`select s.courier, s.tracking_number from shipments s join recheck_schedule q on q.shipment_id = s.id where s.state = 'pending' limit ${EMIT_N}`) as unknown as {
          courier: string;
          tracking_number: string;
        }[];
      const at = new Date(Date.now() - 60_000).toISOString();
      const snap: TrackingSnapshot = {
        checkpoints: [
          {
            state: "in_transit",
            subStatus: "picked_up",
            activity: "Picked up",
            location: "Mumbai",
            localDate: at.slice(0, 10),
            localTime: at.slice(11, 16),
            at,
            rawCode: "UD",
            rawStatus: "Picked Up",
            remark: null,
          },
        ],
        originCity: "Mumbai",
        destinationCity: "Pune",
        podUrl: null,
        remark: null,
      };
      let emitted = 0;
      let next = 0;
      const t3 = performance.now();
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          while (next < pending.length) {
            const p = pending[next++]!;
            const r = await recordFetch(tdb.db, courierBySlug(p.courier)!, p.tracking_number, snap, {
              nowMs: Date.now(),
              recheckIntervalSeconds: config.recheckIntervalSeconds,
              onEvents: outboxEventSink,
            });
            if (r.event) emitted++;
          }
        }),
      );
      const s3 = (performance.now() - t3) / 1000;
      figures.emission = {
        shipments: pending.length,
        events: emitted,
        seconds: +s3.toFixed(2),
        events_per_s: +(emitted / s3).toFixed(1),
        concurrency: 20,
      };
      out.eventsPerSec = +(emitted / s3).toFixed(1);
      log(
        `event emission (recordFetch, no courier): ${fmt(emitted, 0)} events + outbox rows in ${s3.toFixed(2)} s = ${fmt(emitted / s3)} /s at 20 concurrent transactions`,
      );
    }

    // ---- 1b. claim cost at 1M --------------------------------------------------------------------
    if (opts.million ?? process.env.BENCH_MILLION !== "0") {
      log(`grew to 1,000,000 shipments in ${fmt(await grow(sql, acc.id, 100_000, 1_000_000), 0)} ms`);
      await claimAt(1_000_000, "claimMs1M");
    }
    out.ratio = +((out.claimMs1M ?? out.claimMs100k!) / out.claimMs10k!).toFixed(2);
    log(JSON.stringify({ bench: "recheck", ...figures, ratio: out.ratio }));
    return out;
  } finally {
    await backends.close();
    await sim.stop();
    await tdb.drop();
  }
}

if (import.meta.main) {
  const r = await measure();
  console.log(
    `claim 1,000 due re-checks: ${r.claimMs10k} ms at 10k, ${r.claimMs100k} ms at 100k${r.claimMs1M ? `, ${r.claimMs1M} ms at 1M` : ""}; ratio ${r.ratio}`,
  );
}
