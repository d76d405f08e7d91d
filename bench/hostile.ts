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
 *
 * `fuzz` mode — the project's own fuzzer, as an outside one would run it:
 *
 *   bun run bench:hostile fuzz                     # REQUESTS=100000 SEED=2026 CONCURRENCY=16
 *
 * starts the service in a child process (test/helpers/hostile-probe.ts `serve`: the real app on loopback,
 * plain HTTP, a fresh test database, 40 Business accounts, no DNS), sends REQUESTS seeded hostile requests
 * (test/helpers/hostile-requests.ts: every operation of the document, unknown paths, the dashboard, every
 * method, broken query strings, headers and bodies, with a valid key, a bad one or none) and checks each
 * answer: never 5xx, no internals, every body in a documented shape. Prints the status counts, the problems
 * (first 20), and the service's RSS (from /proc) after a 2,000-request warm-up, every 10,000 requests and at
 * the end. Exit code 1 when any answer had a problem.
 */
import { readFileSync } from "node:fs";
import { createAccount, createApiKey } from "../src/modules/accounts/service.ts";
import { listenInProcess } from "./in-process.ts";

if (process.argv[2] === "fuzz") {
  await fuzz();
  process.exit(process.exitCode ?? 0);
}

async function fuzz(): Promise<void> {
  const { docValidator } = await import("../test/client/openapi.ts");
  const { answerProblem, hostileRequests } = await import("../test/helpers/hostile-requests.ts");
  const total = Number(process.env.REQUESTS ?? 100_000);
  const seed = Number(process.env.SEED ?? 2026);
  const concurrency = Number(process.env.CONCURRENCY ?? 16);
  const child = Bun.spawn(["bun", "test/helpers/hostile-probe.ts", "serve"], { stdout: "pipe", stderr: "inherit" });
  const reader = child.stdout.getReader();
  let line = "";
  while (!line.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the fuzz service exited before it started");
    line += new TextDecoder().decode(value);
  }
  const svc = JSON.parse(line.slice(0, line.indexOf("\n"))) as {
    port: number;
    pid: number;
    keys: string[];
    webhookIds: string[];
  };
  const base = `http://127.0.0.1:${svc.port}`;
  const rssMiB = () => {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${svc.pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : NaN;
  };
  const v = docValidator(await (await fetch(`${base}/openapi.json`)).json());
  const gen = hostileRequests(v.doc, svc, seed);
  const statuses = new Map<number, number>();
  const problems: string[] = [];
  const rss: [number, number][] = [[0, rssMiB()]];
  let sent = 0;
  const t0 = performance.now();
  async function one(): Promise<void> {
    const req = gen.next();
    const res = await fetch(base + req.path, {
      method: req.method,
      headers: req.headers,
      body: req.body as BodyInit | undefined,
      redirect: "manual",
    }).catch(
      (e: Error) =>
        ({ status: 0, headers: new Headers(), text: async () => `transport: ${e.message}` }) as unknown as Response,
    );
    const text = await res.text();
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    const problem = res.status === 0 ? text : answerProblem(v, req, res.status, res.headers, text);
    if (problem)
      problems.push(
        `${req.method} ${req.path.slice(0, 160)} key=${req.headers["x-api-key"] ? "yes" : "no"} → ${res.status}: ${problem}; ${text.slice(0, 200)}`,
      );
  }
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (sent < total) {
        const n = ++sent;
        await one();
        if (n === 2000 || n % 10_000 === 0) rss.push([n, rssMiB()]);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  if (rss.at(-1)![0] !== total) rss.push([total, rssMiB()]);
  const fivexx = [...statuses].filter(([s]) => s >= 500).reduce((a, [, n]) => a + n, 0);
  console.log(
    `fuzz: ${total} requests (seed ${seed}, concurrency ${concurrency}) in ${seconds.toFixed(0)} s, Bun ${Bun.version}`,
  );
  console.log(
    `statuses: ${[...statuses]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}×${n}`)
      .join(" ")}`,
  );
  console.log(`5xx: ${fivexx}; answers outside the documented shapes: ${problems.length}`);
  for (const p of problems.slice(0, 20)) console.log(`  ${p}`);
  console.log(`service RSS (MiB) by requests sent: ${rss.map(([n, m]) => `${n}: ${m.toFixed(1)}`).join(", ")}`);
  const warm = rss.find(([n]) => n === 2000)?.[1] ?? rss[0]![1];
  console.log(
    `RSS after warm-up ${warm.toFixed(1)} MiB → end ${rss.at(-1)![1].toFixed(1)} MiB (${rss.at(-1)![1] - warm >= 0 ? "+" : ""}${(rss.at(-1)![1] - warm).toFixed(1)})`,
  );
  child.kill("SIGTERM");
  await child.exited;
  if (problems.length > 0) process.exitCode = 1;
}

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const DEPTH = 32_000;

const served = await listenInProcess(10);
const { tdb, base } = served;
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

function send(
  headers: Record<string, string>,
  payload = body,
): Promise<{ status: number; text: string; ms: number; healthMs: number; peakRss: number }> {
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

console.log(
  `POST /v1/webhooks with ${body.length} bytes of ${DEPTH} nested arrays, ${ROUNDS} rounds per case, Bun ${Bun.version}, NODE_ENV=${process.env.NODE_ENV ?? "(unset)"}`,
);
await send({ "content-type": "application/json" }, "[]"); // warm-up: JIT, connections
await run("no key", { "content-type": "application/json" });
// Well-formed but unknown: costs the hash and the lookup a real key costs.
await run("unknown key", { "content-type": "application/json", "x-api-key": `ctk_${"A".repeat(43)}` });
await run("valid key", { "content-type": "application/json", "x-api-key": key });

worker.terminate();
await served.stop();
process.exit(0);
