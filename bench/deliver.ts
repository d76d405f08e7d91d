/**
 * `bun run bench:deliver` — the delivery worker against a local HTTPS
 * receiver that answers 200 at once (issue 5, Benchmark).
 *
 * 1. Latency: 1,000 events committed one per transaction (paced below
 *    capacity) while the worker runs; commit-to-receipt p50/p99.
 * 2. Throughput: 10,000 outbox rows committed, then the worker started;
 *    deliveries per second until the receiver has all of them; RSS.
 * 3. Ceiling: a plain undici loop (same concurrency, same CA, keep-alive)
 *    posting the same 10,000 bodies and headers to the same receiver;
 *    the worker's figure is reported as a ratio of it.
 *
 * Uses a throw-away database from test/helpers/db.ts (TEST_PG_URL).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rootCertificates } from "node:tls";
import selfsigned from "selfsigned";
import * as undici from "undici/index.js";
import { loadConfig } from "../src/config.ts";
import { events, follows, shipments } from "../src/db/schema/index.ts";
import { systemClock } from "../src/lib/clock.ts";
import { newId } from "../src/lib/ids.ts";
import { silentLogger } from "../src/lib/log.ts";
import { createAccount } from "../src/modules/accounts/service.ts";
import { fanOutEvent } from "../src/modules/webhooks/outbox.ts";
import { createWebhook } from "../src/modules/webhooks/service.ts";
import { createDeliveryWorker, type WorkerDeps } from "../src/modules/webhooks/worker.ts";
import { createTestDatabase } from "../test/helpers/db.ts";

const N = Number(process.env.BENCH_N ?? 10_000);
const LAT_N = Number(process.env.BENCH_LATENCY_N ?? 1_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);

const pems = await selfsigned.generate([{ name: "commonName", value: "localhost" }], {
  keyType: "ec",
  curve: "P-256",
  extensions: [{ name: "subjectAltName", altNames: [{ type: 2, value: "localhost" }, { type: 7, ip: "127.0.0.1" }] }],
} as never);
const caFile = join(mkdtempSync(join(tmpdir(), "bench-ca-")), "ca.pem");
writeFileSync(caFile, pems.cert);

// ---- receiver -------------------------------------------------------------------------
const commitAt = new Map<string, number>();
const latencies: number[] = [];
const bodies: { body: Uint8Array; headers: Record<string, string> }[] = [];
let received = 0;
let onReceived: (() => void) | undefined;
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  tls: { cert: pems.cert, key: pems.private },
  async fetch(req) {
    const raw = new Uint8Array(await req.arrayBuffer());
    const t = performance.now();
    if (req.headers.get("x-bench") !== "ceiling") {
      const tn = (JSON.parse(new TextDecoder().decode(raw)) as { data: { tracking_number: string } }).data.tracking_number;
      const c = commitAt.get(tn);
      if (c !== undefined) latencies.push(t - c);
      if (bodies.length < N) bodies.push({ body: raw, headers: Object.fromEntries([...req.headers].filter(([k]) => k.startsWith("x-"))) });
    }
    received++;
    onReceived?.();
    return new Response("ok");
  },
});
const url = `https://127.0.0.1:${server.port}/hook`;

// ---- database, account, webhook, shipments ----------------------------------------------
const tdb = await createTestDatabase({ max: 20 });
const config = loadConfig({ COURIER_MODE: "sandbox", WEBHOOK_CA_FILE: caFile, WEBHOOK_ALLOW_PRIVATE_CIDRS: "127.0.0.0/8" });
const deps: WorkerDeps = { config, db: tdb.db, clock: systemClock, log: silentLogger, secretsKey: crypto.getRandomValues(new Uint8Array(32)) };
const acc = await createAccount(tdb.db, { email: `bench-${Date.now()}@example.com`, plan: "business" });
await createWebhook(deps, acc, { url, events: ["tracking.updated"], mode: "live" });

const TOTAL = N + LAT_N;
const shipmentIds: string[] = [];
for (let i = 0; i < TOTAL; i += 1000) {
  const rows = Array.from({ length: Math.min(1000, TOTAL - i) }, (_, j) => ({
    id: newId("shp"),
    courier: "delhivery",
    trackingNumber: String(10_000_000_000 + i + j),
    state: "in_transit",
    mostRecentStatus: "In transit",
    checkpoints: [
      { state: "in_transit" as const, subStatus: null, activity: "Picked up", location: "Mumbai", localDate: "2026-11-03", localTime: "09:15", at: "2026-11-03T03:45:00Z", rawCode: null, rawStatus: null, remark: null },
      { state: "in_transit" as const, subStatus: null, activity: "Reached hub", location: "Mumbai to Pune", localDate: "2026-11-04", localTime: "18:40", at: "2026-11-04T13:10:00Z", rawCode: null, rawStatus: null, remark: null },
    ],
    checkpointCount: 2,
    originCity: "Mumbai",
    destinationCity: "Pune",
    followers: 1,
  }));
  await tdb.db.insert(shipments).values(rows);
  await tdb.db.insert(follows).values(rows.map((r) => ({ accountId: acc.id, shipmentId: r.id })));
  shipmentIds.push(...rows.map((r) => r.id));
}
const tnOf = (i: number) => String(10_000_000_000 + i);

async function emitBatch(from: number, to: number): Promise<void> {
  await tdb.db.transaction(async (tx) => {
    const evs = [];
    for (let i = from; i < to; i++) evs.push({ id: newId("evt"), shipmentId: shipmentIds[i]!, type: "tracking.updated", status: "in_transit", enqueuedAt: new Date() });
    await tx.insert(events).values(evs);
    for (const e of evs) await fanOutEvent(tx, { eventId: e.id, shipmentId: e.shipmentId, type: "tracking.updated", enqueuedAt: e.enqueuedAt });
  });
}

const waitReceived = (n: number) =>
  new Promise<void>((resolve) => {
    if (received >= n) return resolve();
    onReceived = () => received >= n && (onReceived = undefined, resolve());
  });
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

// ---- 1. latency -----------------------------------------------------------------------
const worker = createDeliveryWorker({ ...deps, concurrency: CONCURRENCY });
await worker.start();
for (let i = N; i < TOTAL; i++) {
  await emitBatch(i, i + 1);
  commitAt.set(tnOf(i), performance.now());
  await Bun.sleep(2);
}
await waitReceived(LAT_N);
await worker.stop({ timeout: 10_000 });
const latP50 = pct(latencies, 50);
const latP99 = pct(latencies, 99);
latencies.length = 0;
bodies.length = 0;

// ---- 2. throughput ----------------------------------------------------------------------
for (let i = 0; i < N; i += 500) await emitBatch(i, Math.min(N, i + 500));
// Fresh tables: give the planner statistics, as a running service's tables have.
await tdb.sql`analyze`;
const committed = performance.now();
for (let i = 0; i < N; i++) commitAt.set(tnOf(i), committed);
received = 0;
const worker2 = createDeliveryWorker({ ...deps, concurrency: CONCURRENCY });
const t0 = performance.now();
await worker2.start();
await waitReceived(N);
const workerSecs = (performance.now() - t0) / 1000;
const rssWorker = process.memoryUsage().rss;
await worker2.stop({ timeout: 10_000 });
const drainP50 = pct(latencies, 50);
const drainP99 = pct(latencies, 99);

// ---- 3. ceiling: plain undici, same bodies ------------------------------------------------
const agent = new undici.Agent({ connections: CONCURRENCY, connect: { ca: [...rootCertificates, pems.cert] } });
received = 0;
let next = 0;
const t1 = performance.now();
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < bodies.length) {
      const b = bodies[next++]!;
      const res = await undici.request(url, { method: "POST", body: b.body, headers: { "content-type": "application/json", ...b.headers, "x-bench": "ceiling" }, dispatcher: agent });
      await res.body.dump();
    }
  }),
);
const ceilingSecs = (performance.now() - t1) / 1000;
await agent.close();

const workerRate = N / workerSecs;
const ceilingRate = bodies.length / ceilingSecs;
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;
console.log(
  JSON.stringify(
    {
      deliveries: N,
      concurrency: CONCURRENCY,
      worker_deliveries_per_s: Math.round(workerRate),
      ceiling_undici_per_s: Math.round(ceilingRate),
      ratio: Number((workerRate / ceilingRate).toFixed(2)),
      latency_paced_ms: { events: LAT_N, p50: Number(latP50.toFixed(1)), p99: Number(latP99.toFixed(1)) },
      latency_backlog_ms: { p50: Number(drainP50.toFixed(0)), p99: Number(drainP99.toFixed(0)) },
      rss: mb(rssWorker),
    },
    null,
    2,
  ),
);
console.log(
  `worker: ${Math.round(workerRate)} deliveries/s (${N} in ${workerSecs.toFixed(2)} s); plain undici: ${Math.round(ceilingRate)}/s; ratio ${(workerRate / ceilingRate).toFixed(2)}; ` +
    `commit→receipt p50 ${latP50.toFixed(1)} ms, p99 ${latP99.toFixed(1)} ms (paced); RSS ${mb(rssWorker)}`,
);
server.stop(true);
await tdb.drop();
process.exit(0);
