/**
 * `bun run bench:recheck` — scheduled re-checks (issue 4, Benchmark).
 *
 * 1. Claim cost vs table size: followed, due shipments built with one
 *    `insert … select generate_series` statement; time to claim 1,000 due
 *    rows (median of 5 claims) at 10k, 100k and (BENCH_MILLION=0 skips it)
 *    1M rows, and whether the plan walks shipments_due_idx.
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
 */
import { loadConfig } from "../src/config.ts";
import { webhooks } from "../src/db/schema/index.ts";
import { systemClock } from "../src/lib/clock.ts";
import { newId } from "../src/lib/ids.ts";
import { silentLogger } from "../src/lib/log.ts";
import { createAccount } from "../src/modules/accounts/service.ts";
import type { TrackingSnapshot } from "../src/modules/couriers/adapters/types.ts";
import { courierBySlug } from "../src/modules/couriers/catalogue.ts";
import { createCourierBackends } from "../src/modules/couriers/registry.ts";
import { countDue } from "../src/modules/following/metrics.ts";
import { claimDue, createRecheckRunner, releaseClaims } from "../src/modules/following/recheck.ts";
import { recordFetch } from "../src/modules/tracking/store.ts";
import { startSimulator } from "../src/sandbox/server.ts";
import { createTestDatabase } from "../test/helpers/db.ts";

const RUN_SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const MILLION = process.env.BENCH_MILLION !== "0";
const LATENCY_MS = 200;

const tdb = await createTestDatabase({ max: 20 });
const sql = tdb.sql;
const config = loadConfig({ COURIER_MODE: "sandbox" });
const sim = startSimulator({ clock: systemClock, stepSeconds: config.sandboxStepSeconds, asyncSeconds: config.sandboxAsyncSeconds, latencyMs: LATENCY_MS });
const backends = createCourierBackends({ config, clock: systemClock, log: silentLogger, sandboxBaseUrl: sim.baseUrlFor });
const deps = { config, db: tdb.db, clock: systemClock, log: silentLogger, backends };

const acc = await createAccount(tdb.db, { email: `bench-recheck-${Date.now()}@example.com`, plan: "growth" });
await tdb.db.insert(webhooks).values({
  id: newId("wh"),
  accountId: acc.id,
  url: "https://hooks.example.com/bench",
  events: ["tracking.updated", "tracking.in_transit", "tracking.out_for_delivery", "tracking.delivered", "tracking.exception"],
  mode: "live",
});

const fmt = (n: number, d = 1) => n.toLocaleString("en-US", { maximumFractionDigits: d });
const figures: Record<string, unknown> = {};

/**
 * Adds shipments [from, to) in one statement (plus one for their follows): five backends in turn,
 * numbers valid for each courier's format ending in 1 (sandbox: in transit), stored as pending and
 * last checked, due at some instant in the past hour.
 */
async function grow(from: number, to: number): Promise<number> {
  const t = performance.now();
  await sql`
    insert into shipments (id, courier, tracking_number, state, followers, last_checked_at, next_check_at)
    select 'shp_bench' || lpad(i::text, 23, '0'), c.slug,
           case c.slug when 'delhivery' then lpad(i::text, 12, '0') || '1'
                       when 'bluedart' then lpad(i::text, 10, '0') || '1'
                       when 'dhl' then lpad(i::text, 10, '0') || '1'
                       when 'ecomexpress' then lpad(i::text, 11, '0') || '1'
                       else lpad(i::text, 13, '0') || '1' end,
           'pending', 1, now(), now() - random() * interval '1 hour'
    from generate_series(${from}::int, ${to - 1}::int) i
    cross join lateral (select (array['delhivery','bluedart','dhl','ecomexpress','xpressbees'])[1 + i % 5] as slug) c
  `;
  await sql`insert into follows (account_id, shipment_id) select ${acc.id}, 'shp_bench' || lpad(i::text, 23, '0') from generate_series(${from}::int, ${to - 1}::int) i`;
  await sql`analyze shipments`;
  return performance.now() - t;
}

/** Median time of 5 claims of 1,000 due rows (each given back after), and the claim's plan. */
async function claimCost(size: number): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const now = Date.now();
    const t = performance.now();
    const rows = await claimDue(tdb.db, now, 1000, 60_000, "bench-claim");
    times.push(performance.now() - t);
    if (rows.length !== 1000) throw new Error(`claimed ${rows.length}`);
    await releaseClaims(tdb.db, rows.map((r) => r.id), "bench-claim", now + 3_600_000);
  }
  times.sort((a, b) => a - b);
  let plan = "";
  await sql
    .begin(async (tx) => {
      const now = new Date().toISOString();
      const p = await tx.unsafe(
        `explain (analyze, buffers) update shipments s set lease_until = $1, lease_owner = 'x', next_check_at = $1
         from (select id from shipments where next_check_at <= $1 and (lease_until is null or lease_until <= $1)
               order by next_check_at limit 1000 for update skip locked) due where s.id = due.id`,
        [now],
      );
      plan = p.map((r) => r["QUERY PLAN"] as string).join("\n");
      throw new Error("rollback");
    })
    .catch(() => {});
  const due = await countDue(tdb.db, Date.now());
  const usesIndex = /Index Scan using shipments_due_idx/.test(plan);
  figures[`claim_1000_at_${size}`] = { median_ms: +times[2]!.toFixed(2), min_ms: +times[0]!.toFixed(2), max_ms: +times[4]!.toFixed(2), due_rows: due, uses_due_index: usesIndex };
  console.log(`claim 1,000 due rows at ${fmt(size, 0)} shipments (${fmt(due, 0)} due): median ${times[2]!.toFixed(2)} ms (min ${times[0]!.toFixed(2)}, max ${times[4]!.toFixed(2)}); plan walks shipments_due_idx: ${usesIndex}`);
}

console.log(`bench:recheck — simulator latency ${LATENCY_MS} ms, COURIER_CONCURRENCY ${config.courierConcurrency}, run ${RUN_SECONDS} s`);

// ---- 1. claim cost at 10k and 100k ------------------------------------------------------------
console.log(`built 10,000 shipments in ${fmt(await grow(0, 10_000), 0)} ms`);
await claimCost(10_000);
console.log(`grew to 100,000 shipments in ${fmt(await grow(10_000, 100_000), 0)} ms`);
await claimCost(100_000);

// ---- 2. sustained re-checks on 100k ----------------------------------------------------------
const runner = createRecheckRunner(deps);
const dueBefore = await countDue(tdb.db, Date.now());
const started = performance.now();
const drained = runner.drain();
let ticks = 0;
const sampler = setInterval(() => void ticks++, 1000);
await Bun.sleep(RUN_SECONDS * 1000);
await runner.stop({ timeout: 15_000 });
const stats = await drained;
clearInterval(sampler);
const secs = (performance.now() - started) / 1000;
const done = stats.changed + stats.unchanged + stats.failed;
const events = Object.values(stats.events).reduce((a, b) => a + b, 0);
const [outbox] = await sql`select count(*)::int as n from deliveries`;
const rss = process.memoryUsage().rss;
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
  per_backend_concurrency: Math.max(1, Math.floor(config.courierConcurrency / 2)),
  backends: 5,
  ceiling_per_s: (5 * Math.max(1, Math.floor(config.courierConcurrency / 2)) * 1000) / LATENCY_MS,
  lease_ms: runner.leaseMs,
  rss_mb: Math.round(rss / 1048576),
};
console.log(
  `sustained: ${fmt(done, 0)} re-checks in ${secs.toFixed(1)} s = ${fmt(done / secs)} /s (ceiling ${fmt((figures.sustained as { ceiling_per_s: number }).ceiling_per_s, 0)} /s = 5 backends × ${Math.floor(config.courierConcurrency / 2)} in flight / ${LATENCY_MS} ms); ` +
    `${fmt(events, 0)} events = ${fmt(events / secs)} /s, ${fmt(outbox!.n, 0)} outbox rows; failed ${stats.failed}; given back at stop ${stats.skipped}; RSS ${Math.round(rss / 1048576)} MB`,
);

// ---- 3. event emission without couriers --------------------------------------------------------
const EMIT_N = 5_000;
const pending = (await sql`select courier, tracking_number from shipments where state = 'pending' and next_check_at is not null limit ${EMIT_N}`) as unknown as { courier: string; tracking_number: string }[];
const at = new Date(Date.now() - 60_000).toISOString();
const snap: TrackingSnapshot = {
  checkpoints: [{ state: "in_transit", subStatus: "picked_up", activity: "Picked up", location: "Mumbai", localDate: at.slice(0, 10), localTime: at.slice(11, 16), at, rawCode: "UD", rawStatus: "Picked Up", remark: null }],
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
      const r = await recordFetch(tdb.db, courierBySlug(p.courier)!, p.tracking_number, snap, { nowMs: Date.now(), recheckIntervalSeconds: config.recheckIntervalSeconds });
      if (r.event) emitted++;
    }
  }),
);
const s3 = (performance.now() - t3) / 1000;
figures.emission = { shipments: pending.length, events: emitted, seconds: +s3.toFixed(2), events_per_s: +(emitted / s3).toFixed(1), concurrency: 20 };
console.log(`event emission (recordFetch, no courier): ${fmt(emitted, 0)} events + outbox rows in ${s3.toFixed(2)} s = ${fmt(emitted / s3)} /s at 20 concurrent transactions`);

// ---- 1b. claim cost at 1M ------------------------------------------------------------------------
if (MILLION) {
  console.log(`grew to 1,000,000 shipments in ${fmt(await grow(100_000, 1_000_000), 0)} ms`);
  await claimCost(1_000_000);
}

console.log(JSON.stringify({ bench: "recheck", ...figures }));
await backends.close();
await sim.stop();
await tdb.drop();
