/**
 * bench:track — authenticated GET /v1/track against the courier simulator
 * (0 ms backend latency) at a fixed concurrency, and GET /v1/couriers in the
 * same run, so the cost of auth + quota + rate limit + courier call + storage
 * shows as a ratio. Prints requests/s, p50/p99 latency (ms) and RSS.
 *
 * Real parts: a real HTTP server on loopback (plain HTTP: TLS is a constant
 * cost on both endpoints and would blur the ratio), real PostgreSQL (a fresh
 * database from the test template), the simulator as a real server. The load
 * generator runs in a Worker thread (bench/load-client.ts), not on the
 * service's own JavaScript thread.
 * Requests are spread over ACCOUNTS Business accounts (default 2,000: 40,000/s
 * before the per-minute limit of 1,200 each could cap a run). Bounded: DURATION_S seconds per endpoint (default 10).
 *
 *   bun run bench:track            # CONCURRENCY=32 DURATION_S=10
 */
import { systemClock } from "../src/lib/clock.ts";
import { createAccount, createApiKey } from "../src/modules/accounts/service.ts";
import { startSimulator } from "../src/sandbox/server.ts";
import { listenInProcess } from "./in-process.ts";

const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
const DURATION_MS = Number(process.env.DURATION_S ?? 10) * 1000;

const sim = startSimulator({ clock: systemClock, stepSeconds: 3600, asyncSeconds: 1 });
const served = await listenInProcess(20, sim);
const { tdb, base } = served;

const keys: string[] = [];
const ACCOUNTS = Number(process.env.ACCOUNTS ?? 2000);
for (let i = 0; i < ACCOUNTS; i++) {
  const a = await createAccount(tdb.db, { email: `bench${i}@example.com`, plan: "business" });
  keys.push((await createApiKey(tdb.db, a.id)).key);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Runs the load generator in a Worker thread (its own core) against `paths`, round-robin over the keys. */
async function run(name: string, paths: string[]) {
  const worker = new Worker(new URL("./load-client.ts", import.meta.url));
  const result = await new Promise<{ latencies: number[]; statuses: Record<string, number>; seconds: number }>(
    (resolve) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.postMessage({ base, paths, keys, concurrency: CONCURRENCY, durationMs: DURATION_MS });
    },
  );
  worker.terminate();
  const latencies = result.latencies.sort((a, b) => a - b);
  const rps = latencies.length / result.seconds;
  console.log(
    `${name.padEnd(14)} ${rps.toFixed(0).padStart(6)} req/s   p50 ${percentile(latencies, 50).toFixed(2)} ms   p99 ${percentile(latencies, 99).toFixed(2)} ms   ` +
      `requests ${latencies.length}   statuses ${JSON.stringify(result.statuses)}   RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
  );
  return rps;
}

console.log(
  `concurrency ${CONCURRENCY}, ${DURATION_MS / 1000} s per endpoint, simulator latency 0 ms, Bun ${Bun.version}`,
);
// Warm-up: JIT, connection pools, first inserts.
await run("warm-up", ["/v1/couriers"]);
const couriers = await run("/v1/couriers", ["/v1/couriers"]);
// 5,000 distinct Delhivery numbers ending in 0 (delivered) or 1 (in transit, followed).
const track = await run(
  "/v1/track",
  Array.from(
    { length: 5000 },
    (_, n) => `/v1/track?courier=delhivery&tracking_number=12345${String(n).padStart(7, "0")}${n % 2}`,
  ),
);
console.log(`ratio /v1/track : /v1/couriers throughput = 1 : ${(couriers / track).toFixed(2)}`);

await served.stop();
await sim.stop();
process.exit(0);
