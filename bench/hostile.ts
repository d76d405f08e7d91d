/**
 * bench:hostile — what one hostile request costs the service: the 64,000-byte
 * body of 32,000 nested JSON arrays (`[[[…]]]`) sent to POST /v1/webhooks
 * without an API key, with a well-formed unknown key and with a valid key.
 * Prints, per case, the answer (status and error code), the response time
 * (ms), the RSS growth (MiB) of the service process, and how long a GET
 * /healthz sent meanwhile waited.
 *
 * Real parts, as bench/track.ts: a real HTTP server on loopback (plain HTTP),
 * real PostgreSQL (a fresh database from the test template). The service runs
 * in this process, so RSS is the service's; the client sends from a Worker
 * thread so a blocked service thread shows as latency, not as a stalled client.
 * Bounded by count: ROUNDS requests per case (default 5).
 *
 *   bun run bench:hostile            # ROUNDS=5
 */
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { systemClock } from "../src/lib/clock.ts";
import { silentLogger } from "../src/lib/log.ts";
import { createAccount, createApiKey } from "../src/modules/accounts/service.ts";
import { createCourierBackends } from "../src/modules/couriers/registry.ts";
import { outboxEventSink } from "../src/modules/webhooks/delivery/outbox.ts";
import { createTestDatabase } from "../test/helpers/db.ts";

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const DEPTH = 32_000;

const tdb = await createTestDatabase({ max: 10 });
const config = loadConfig({ COURIER_MODE: "sandbox" });
const backends = createCourierBackends({ config, clock: systemClock, log: silentLogger });
const app = buildApp({ config, db: tdb.db, clock: systemClock, log: silentLogger, secretsKey: new Uint8Array(32), backends, onEvents: outboxEventSink }).listen({
  port: 0,
  hostname: "127.0.0.1",
  development: false,
});
const base = `http://127.0.0.1:${app.server!.port}`;
const account = await createAccount(tdb.db, { email: "hostile@example.com", plan: "business" });
const { key } = await createApiKey(tdb.db, account.id);

const body = "[".repeat(DEPTH) + "]".repeat(DEPTH);

/** The client, in a Worker: sends one request and, while it is in flight, times a GET /healthz. */
const clientSource = `
self.onmessage = async (e) => {
  const { url, health, headers, body } = e.data;
  // RSS is the process's, so this thread sees the service's peak even while the service thread is busy.
  let peakRss = process.memoryUsage.rss();
  const sampler = setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage.rss()); }, 5);
  const t0 = performance.now();
  const pending = fetch(url, { method: "POST", headers, body }).then(async (r) => ({ status: r.status, text: await r.text(), ms: performance.now() - t0 }));
  await new Promise((r) => setTimeout(r, 5));
  const h0 = performance.now();
  await fetch(health).then((r) => r.text());
  const healthMs = performance.now() - h0;
  const res = await pending;
  clearInterval(sampler);
  self.postMessage({ ...res, healthMs, peakRss: Math.max(peakRss, process.memoryUsage.rss()) });
};`;
const worker = new Worker(URL.createObjectURL(new Blob([clientSource], { type: "application/javascript" })));

function send(headers: Record<string, string>, payload = body): Promise<{ status: number; text: string; ms: number; healthMs: number; peakRss: number }> {
  return new Promise((resolve) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.postMessage({ url: `${base}/v1/webhooks`, health: `${base}/healthz`, headers, body: payload });
  });
}

const mib = (n: number) => (n / 2 ** 20).toFixed(1);

async function run(name: string, headers: Record<string, string>) {
  Bun.gc(true);
  await Bun.sleep(50);
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const times: number[] = [];
  const health: number[] = [];
  let answer = "";
  for (let i = 0; i < ROUNDS; i++) {
    const r = await send(headers);
    peak = Math.max(peak, r.peakRss);
    times.push(r.ms);
    health.push(r.healthMs);
    let code = "";
    try {
      const j = JSON.parse(r.text);
      code = j.error?.code ?? j.detail?.[0]?.type ?? "";
    } catch {
      code = `non-JSON body (${r.text.length} bytes)`;
    }
    answer = `${r.status} ${code}`;
  }
  times.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(12)} answer ${answer.padEnd(26)} time median ${times[Math.floor(times.length / 2)]!.toFixed(1)} ms, max ${times.at(-1)!.toFixed(1)} ms   ` +
      `RSS ${mib(rss0)} → peak ${mib(peak)} MiB (+${mib(peak - rss0)})   /healthz during it: max ${Math.max(...health).toFixed(1)} ms`,
  );
}

console.log(`POST /v1/webhooks with ${body.length} bytes of ${DEPTH} nested arrays, ${ROUNDS} rounds per case, Bun ${Bun.version}, NODE_ENV=${process.env.NODE_ENV ?? "(unset)"}`);
await send({ "content-type": "application/json" }, "[]"); // warm-up: JIT, connections
await run("no key", { "content-type": "application/json" });
// Well-formed but unknown: costs the hash and the lookup a real key costs.
await run("unknown key", { "content-type": "application/json", "x-api-key": `ctk_${"A".repeat(43)}` });
await run("valid key", { "content-type": "application/json", "x-api-key": key });

worker.terminate();
await app.stop(true);
await backends.close();
await tdb.drop();
process.exit(0);
