/**
 * `bun run bench:transit-stats` — the transit statistics rebuild at scale (docs/predictions.md, "Rebuild cost").
 *
 * Builds BENCH_DELIVERED (default 1,000,000) delivered shipments with six checkpoints each, server-side with
 * `generate_series`, over 3 couriers × 12 cities, in a throw-away database (test/helpers/db.ts, TEST_PG_URL); then
 * runs `rebuildTransitStats` while a probe reads one shipment by courier + AWB (the lookup's statement) every
 * 20 ms. Prints the rebuild's time, the process's RSS and heap growth, the longest single batch, and the probe's
 * latency during the rebuild against before it. Nothing leaves the machine.
 */
import { rebuildTransitStats } from "../src/modules/predictions/rebuild.ts";
import { createTestDatabase } from "../test/helpers/db.ts";

const N = Number(process.env.BENCH_DELIVERED ?? 1_000_000);
const CHUNK = 50_000;
const tdb = await createTestDatabase({ max: 4 });

const cp = (state: string, at: string, loc: string, act: string) =>
  `jsonb_build_object('state', '${state}', 'subStatus', null, 'activity', '${act}', 'location', ${loc}, 'localDate', to_char(${at} + interval '330 minutes', 'YYYY-MM-DD'),
    'localTime', to_char(${at} + interval '330 minutes', 'HH24:MI'), 'at', to_char(${at}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'rawCode', 'X1', 'rawStatus', '${act}', 'remark', null)`;

const built = performance.now();
for (let from = 0; from < N; from += CHUNK) {
  const to = Math.min(N, from + CHUNK);
  await tdb.sql.unsafe(`
    insert into shipments (id, courier, tracking_number, state, most_recent_status, checkpoints, checkpoint_count, origin_city, destination_city, delivered_at, terminal, last_checked_at)
    select 'shp_bench' || lpad(i::text, 23, '0'), (array['delhivery','bluedart','dtdc'])[1 + i % 3], 'BENCH' || i, 'delivered', 'Delivered',
      jsonb_build_array(${cp("delivered", "d", "dst", "Delivered")}, ${cp("out_for_delivery", "(d - interval '5 hours')", "dst", "Out for delivery")},
        ${cp("in_transit", "(p + (d - p) * 0.7)", "dst", "Reached destination hub")}, ${cp("in_transit", "(p + (d - p) * 0.3)", "src", "Bag received at facility")},
        ${cp("in_transit", "p", "src", "Picked up")}, ${cp("pending", "(p - interval '3 hours')", "src", "Manifested")}),
      6, src, dst, to_char(d + interval '330 minutes', 'YYYY-MM-DD'), true, d
    from generate_series(${from}, ${to - 1}) i,
      lateral (select (array['Mumbai','Delhi','Bengaluru','Chennai','Kolkata','Hyderabad','Pune','Ahmedabad','Jaipur','Lucknow','Kochi','Indore'])[1 + (i / 3) % 12] as src,
        (array['Mumbai','Delhi','Bengaluru','Chennai','Kolkata','Hyderabad','Pune','Ahmedabad','Jaipur','Lucknow','Kochi','Indore'])[1 + (i / 36) % 12] as dst,
        now() - (hashint4(i)::float8 / 2147483648.0 + 1) / 2 * interval '85 days' as d) c,
      lateral (select c.d - (24 + 100 * abs(hashint4(i + 7)::float8 / 2147483648.0)) * interval '1 hour' as p) q`);
}
await tdb.sql`vacuum analyze shipments`;
const [{ size }] = (await tdb.sql`select pg_size_pretty(pg_total_relation_size('shipments')) as size`) as unknown as [
  { size: string },
];
console.log(
  `built ${N.toLocaleString("en")} delivered shipments in ${((performance.now() - built) / 1000).toFixed(1)} s (shipments: ${size})`,
);

/** Latencies (ms) of the lookup's read of one shipment, every 20 ms until `until` settles. */
async function probe(until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => (done = true));
  const out: number[] = [];
  while (!done) {
    const t = performance.now();
    await tdb.sql`select id, state from shipments where courier = 'dtdc' and tracking_number = ${"BENCH" + Math.floor(Math.random() * N)}`;
    out.push(performance.now() - t);
    await Bun.sleep(20);
  }
  return out;
}
const pct = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!.toFixed(1);

const before = await probe(Bun.sleep(5_000));
Bun.gc(true);
const rss0 = process.memoryUsage().rss;
const heap0 = process.memoryUsage().heapUsed;
let peakRss = rss0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
const rebuild = rebuildTransitStats(tdb.db, Date.now());
const during = await probe(rebuild);
const r = await rebuild;
clearInterval(sampler);
const heap1 = process.memoryUsage().heapUsed;
console.log(
  `rebuild: ${(r.ms / 1000).toFixed(1)} s, ${r.batches} batches (${(r.ms / r.batches).toFixed(0)} ms each on average), ${r.deliveries.toLocaleString("en")} deliveries -> ${r.rows} rows; ` +
    `RSS ${Math.round(rss0 / 1048576)} -> peak ${Math.round(peakRss / 1048576)} MB, heap +${Math.round((heap1 - heap0) / 1048576)} MB`,
);
console.log(
  `probe (lookup read) before: p50 ${pct(before, 0.5)} ms, p99 ${pct(before, 0.99)} ms; during: p50 ${pct(during, 0.5)} ms, p99 ${pct(during, 0.99)} ms, max ${pct(during, 1)} ms (${during.length} reads)`,
);
await tdb.drop();
