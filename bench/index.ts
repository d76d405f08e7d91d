/**
 * `bun run bench` — the service against the stack's own ceilings, in one run,
 * printed as one table of ratios (figures go in notes, never in tests).
 *
 * Started here, each in its own process, all on one self-signed TLS
 * certificate and loopback only:
 * - the service as users run it: `bun src/main.ts` with DATABASE_URL and the
 *   default environment otherwise (LOG_LEVEL unset = info, so the access log
 *   is on; ROLE unset = every role in one process), sandbox couriers,
 *   simulator latency 0 ms, a fresh database copied from the test template,
 *   2,000 Business accounts so that no per-minute limit caps a run. Its stdout
 *   goes to /dev/null (no pipe back-pressure; `--service-logs` keeps it in a file);
 * - a second process of that configuration for the `/v1/track` load, so that
 *   what it leaves behind does not land in the `/v1/couriers` figures;
 * - the same service with `LOG_LEVEL=warn` (no access lines) and with
 *   `ROLE=api` (no jobs), for the extra rows and the access log's cost
 *   (`--skip warn,api` leaves them out);
 * - a bare Elysia "hello" and a bare `Bun.serve` "hello" (bench/bare.ts), and a bare `Bun.serve` doing only
 *   the `/v1/couriers` answer's own work, P1's ceiling (`--skip work` leaves it out);
 * - the load generator: Debian's `wrk` (keep-alive, `CONNECTIONS` connections,
 *   2 threads), rotating keys and paths from a generated Lua script; P6 uses
 *   bench/p6-client.ts, one TLS connection per client.
 *
 * Measures (medians of `ROUNDS` rounds; each ratio is taken within a round, whose `DURATION_S` per target
 * is run as `SLICES` slices taking turns — bare Bun, bare Elysia, /v1/couriers, /v1/track, again — so that
 * a shared host slowing down mid-round slows every target alike):
 * - P1  authenticated `GET /v1/couriers` ÷ bare Elysia hello (req/s), default configuration;
 * - P2  `GET /v1/track` of delivered sandbox AWBs (digit 0, stored and unchanged) ÷ P1, default configuration;
 * - the access log's cost: `GET /v1/couriers` with `LOG_LEVEL=warn` against the default, same slices;
 * - P5  service RSS idle (after start) and peak under P2 load (MiB), default configuration;
 * - P6  `P6_N` concurrent asynchronous lookups (sandbox digit 9, answer after
 *       `P6_ASYNC_S` s): how many ended 200 / 504 / 503 / reset;
 * - P3, P4 come from bench/deliver.ts and bench/recheck.ts (run as child
 *   processes; their JSON output is parsed): deliveries/s ÷ plain undici, and
 *   claim time at 1M ÷ at 10k rows.
 *
 * The machine may be shared: absolute figures are noisy, ratios within one
 * round are what to compare.
 *
 *   bun run bench                        # everything (P3/P4 take minutes)
 *   bun run bench --skip p3,p4           # API side only
 *   bun run bench --skip p3,p4,p6,warn,api --rounds 1 --duration 5   # the default configuration, quickly
 *   bun run bench --rounds 1 --duration 5
 *   bun run bench --slices 1             # each target's 10 s in one piece (the old way)
 *   bun run bench --skip p3,p4,p6 --profile /tmp/prof   # + a CPU profile of the service
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { selfSignedCertificate } from "../src/http/tls.ts";
import { newId } from "../src/lib/ids.ts";
import { generateApiKey, hashApiKey, keyDisplayPrefix } from "../src/modules/accounts/keys.ts";
import { createTestDatabase } from "../test/helpers/db.ts";
import { freePort, median, printTable, procCpuMs, procRss, type Row } from "./report.ts";
import { runWrk, type WrkResult } from "./wrk.ts";

const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: process.env.BENCH_ROUNDS ?? "3" },
    duration: { type: "string", default: process.env.DURATION_S ?? "10" },
    slices: { type: "string", default: process.env.BENCH_SLICES ?? "5" },
    connections: { type: "string", default: process.env.CONNECTIONS ?? "64" },
    skip: { type: "string", default: process.env.BENCH_SKIP ?? "" },
    "p6-n": { type: "string", default: "200" },
    "p6-async-s": { type: "string", default: "15" },
    /** Keep each service's stdout (its log) in a file in the bench's directory instead of /dev/null. */
    "service-logs": { type: "boolean", default: false },
    /** Write a CPU profile of the service (Bun's --cpu-prof) into this directory. */
    profile: { type: "string", default: "" },
  },
});
const ROUNDS = Number(args.rounds);
const DURATION_S = Number(args.duration);
const SLICES = Math.max(1, Number(args.slices));
/** wrk takes whole seconds. */
const SLICE_S = Math.max(1, Math.round(DURATION_S / SLICES));
const CONNECTIONS = Number(args.connections);
const SKIP = new Set(
  args
    .skip!.split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean),
);
const P6_N = Number(args["p6-n"]);
const ROOT = join(import.meta.dir, "..");

if (!Bun.which("wrk")) {
  console.error(
    "bench: the load generator `wrk` is not installed. On Debian/Ubuntu: apt-get update && apt-get install -y wrk",
  );
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), "ct-bench-"));
const { cert, key } = await selfSignedCertificate();
const certFile = join(work, "cert.pem");
const keyFile = join(work, "key.pem");
writeFileSync(certFile, cert);
writeFileSync(keyFile, key);

const children: Bun.Subprocess[] = [];
const tdb = await createTestDatabase({ max: 4 });
let cleaned = false;
async function cleanup() {
  if (cleaned) return;
  cleaned = true;
  for (const c of children) c.kill("SIGTERM");
  await Promise.all(children.map((c) => c.exited));
  await tdb.drop().catch(() => {});
  rmSync(work, { recursive: true, force: true });
}
process.on("SIGINT", () => void cleanup().then(() => process.exit(130)));
process.on("SIGTERM", () => void cleanup().then(() => process.exit(143)));
process.on("SIGHUP", () => void cleanup().then(() => process.exit(129)));
// Any other way out (a thrown error, a failed start): no child outlives the run. Orphaned services and
// bare servers kept their database connections and once used up PostgreSQL's max_connections.
process.on("exit", () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
});

/**
 * Spawns `cmd` and resolves once `ready()` holds (or rejects after `timeoutMs`). Its stdout goes to /dev/null, or to
 * `logFile`: neither pushes back, where a pipe read by this process could. /dev/null by default: a file of tens of
 * MB of access lines makes the kernel find page-cache pages for the writer, which a memory-tight guest may charge
 * to the service's CPU (docs/performance.md, "The default configuration").
 */
async function spawnReady(
  cmd: string[],
  env: Record<string, string | undefined>,
  ready: () => Promise<boolean>,
  logFile?: string,
  timeoutMs = 30_000,
): Promise<Bun.Subprocess> {
  const full: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...env })) if (v !== undefined) full[k] = v;
  const proc = Bun.spawn(cmd, { cwd: ROOT, env: full, stdout: logFile ? Bun.file(logFile) : "ignore", stderr: "pipe" });
  children.push(proc);
  let err = "";
  void (async () => {
    for await (const c of proc.stderr as ReadableStream<Uint8Array>)
      err = (err + new TextDecoder().decode(c)).slice(-4000);
  })();
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) break;
    if (await ready().catch(() => false)) return proc;
    await Bun.sleep(100);
  }
  const out = logFile
    ? await Bun.file(logFile)
        .text()
        .catch(() => "")
    : "";
  const hint = logFile ? "" : " (its stdout went to /dev/null: run with --service-logs to keep it)";
  throw new Error(
    `${cmd.join(" ")} did not start (exit ${proc.exitCode})${hint}: ${out.slice(-2000)}${err.slice(-2000)}`,
  );
}

const httpsOk = (url: string) =>
  fetch(url, { tls: { rejectUnauthorized: false } } as RequestInit).then((r) => r.status < 500);

// ---- the service ---------------------------------------------------------------------------------
const secretsKey = randomBytes(32).toString("base64url");
/**
 * One service process on the bench database. `env` on top of the default environment: what `bun start` with
 * DATABASE_URL reads, minus anything of the caller's that would change it (LOG_LEVEL, ROLE…).
 */
function startService(name: string, env: Record<string, string>, profile = false) {
  const port = freePort();
  const base = `https://127.0.0.1:${port}`;
  const inherited = Object.fromEntries(
    Object.keys(process.env)
      .filter((k) => SERVICE_VARS.has(k))
      .map((k) => [k, undefined]),
  );
  const proc = spawnReady(
    ["bun", ...(profile ? ["--cpu-prof", "--cpu-prof-dir", args.profile!] : []), "src/main.ts"],
    {
      ...inherited,
      DATABASE_URL: tdb.url,
      DATA_DIR: join(work, `data-${name}`),
      PORT: String(port),
      HOST: "127.0.0.1",
      TLS_CERT_FILE: certFile,
      TLS_KEY_FILE: keyFile,
      COURIER_MODE: "sandbox",
      SANDBOX_ASYNC_SECONDS: args["p6-async-s"]!,
      SECRETS_KEY: secretsKey,
      ...env,
    },
    () => httpsOk(`${base}/healthz`),
    args["service-logs"] ? join(work, `service-${name}.log`) : undefined,
  );
  return proc.then((p) => ({ proc: p, base }));
}
/** Variables the service reads that a developer's shell may have set: unset for the bench's services. */
const SERVICE_VARS = new Set([
  "LOG_LEVEL",
  "ROLE",
  "ADMIN_PORT",
  "TRUST_PROXY",
  "COURIER_TIMEOUT_MS",
  "COURIER_CONCURRENCY",
  "COURIER_QUEUE_LIMIT",
  "TERMINAL_REUSE_SECONDS",
]);

const { proc: service, base: svcBase } = await startService("default", {}, Boolean(args.profile));
const rssIdle = procRss(service.pid);
// A second process of the same configuration takes the /v1/track load (P2, P5 under load): what that load leaves
// behind (quota blocks given back, rate windows and key-use stamps of 2,000 accounts) would otherwise land in the
// /v1/couriers figures of the first, which the LOG_LEVEL=warn row (couriers only) is compared with.
const trackSvc = await startService("track", {});

// 2,000 Business accounts (1,200/min each, 2.4M/min in all): a 10 s run at 40k req/s sends 400k, and two runs can
// fall in one minute window; with 500 accounts the third round of a fast service was answered 429.
const keys: string[] = [];
const accountRows: { id: string; email: string; plan: string }[] = [];
const keyRows: { id: string; account_id: string; key_hash: string; prefix: string; name: string }[] = [];
for (let i = 0; i < 2000; i++) {
  const id = newId("acc");
  const k = generateApiKey();
  keys.push(k);
  accountRows.push({ id, email: `bench${i}@example.com`, plan: "business" });
  keyRows.push({
    id: newId("key"),
    account_id: id,
    key_hash: hashApiKey(k),
    prefix: keyDisplayPrefix(k),
    name: "bench",
  });
}
await tdb.sql`insert into accounts ${tdb.sql(accountRows)}`;
await tdb.sql`insert into api_keys ${tdb.sql(keyRows)}`;
const keysFile = join(work, "keys.txt");
writeFileSync(keysFile, keys.join("\n"));

// ---- the ceilings ----------------------------------------------------------------------------------
const elysiaPort = freePort();
const elysia = await spawnReady(["bun", "bench/bare.ts", "elysia", String(elysiaPort), certFile, keyFile], {}, () =>
  httpsOk(`https://127.0.0.1:${elysiaPort}/`),
);
const bunPort = freePort();
const bare = await spawnReady(["bun", "bench/bare.ts", "bun", String(bunPort), certFile, keyFile], {}, () =>
  httpsOk(`https://127.0.0.1:${bunPort}/`),
);

// P1's ceiling: a bare Bun.serve doing only the work any server pays for this answer (bench/bare.ts "work").
const couriersBody = await (
  await fetch(`${svcBase}/v1/couriers`, {
    headers: { "x-api-key": keys[0]! },
    tls: { rejectUnauthorized: false },
  } as RequestInit)
).text();
const bodyFile = join(work, "couriers.json");
writeFileSync(bodyFile, couriersBody);
const workPort = freePort();
const bareWork = SKIP.has("work")
  ? undefined
  : await spawnReady(["bun", "bench/bare.ts", "work", String(workPort), certFile, keyFile, bodyFile], {}, () =>
      httpsOk(`https://127.0.0.1:${workPort}/`),
    );

// ---- the extra rows: the same service without access lines, and with the API role only ------------------
const quiet = SKIP.has("warn") ? undefined : await startService("warn", { LOG_LEVEL: "warn" });
const apiOnly = SKIP.has("api") ? undefined : await startService("api", { ROLE: "api" });

// 200 delivered Delhivery numbers (last digit 0): after the warm-up pass they are stored, terminal and unchanged.
const trackPaths = Array.from(
  { length: 200 },
  (_, n) => `/v1/track?courier=delhivery&tracking_number=12345${String(n).padStart(7, "0")}0`,
);
type Target = "bun" | "elysia" | "work" | "couriers" | "track" | "warn" | "api";
const targets: Partial<Record<Target, { name: string; base: string; paths: string[]; keys: string[]; pid: number }>> = {
  bun: { name: "bare Bun.serve hello", base: `https://127.0.0.1:${bunPort}`, paths: ["/"], keys: [], pid: bare.pid },
  elysia: {
    name: "bare Elysia hello",
    base: `https://127.0.0.1:${elysiaPort}`,
    paths: ["/"],
    keys: [],
    pid: elysia.pid,
  },
  ...(bareWork
    ? {
        work: {
          name: "bare Bun.serve, the answer's own work",
          base: `https://127.0.0.1:${workPort}`,
          paths: ["/v1/couriers"],
          keys,
          pid: bareWork.pid,
        },
      }
    : {}),
  couriers: { name: "GET /v1/couriers", base: svcBase, paths: ["/v1/couriers"], keys, pid: service.pid },
  track: { name: "GET /v1/track (delivered)", base: trackSvc.base, paths: trackPaths, keys, pid: trackSvc.proc.pid },
};
if (quiet)
  targets.warn = {
    name: "  the same, LOG_LEVEL=warn",
    base: quiet.base,
    paths: ["/v1/couriers"],
    keys,
    pid: quiet.proc.pid,
  };
if (apiOnly)
  targets.api = {
    name: "  the same, ROLE=api",
    base: apiOnly.base,
    paths: ["/v1/couriers"],
    keys,
    pid: apiOnly.proc.pid,
  };
/** The targets of this run, in the order they take turns. */
const active = Object.keys(targets) as Target[];

type Measured = WrkResult & { rssPeak: number; cpuUs: number; dbCpuUs: number };

/** CPU time (ms) of every PostgreSQL backend connected to the bench database now, by pid. */
async function dbBackendsCpu(): Promise<Map<number, number>> {
  const rows =
    await tdb.sql`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
  return new Map(rows.map((r) => [r.pid as number, procCpuMs(r.pid as number)]));
}

/**
 * One wrk run against target `t`: its figures, the target's peak RSS, its CPU time per request and the
 * bench database's backends' CPU time per request (µs, from /proc; PostgreSQL runs on this machine).
 */
async function measure(t: Target, seconds: number): Promise<Measured> {
  const tg = targets[t]!;
  let rssPeak = procRss(tg.pid);
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, procRss(tg.pid))), 250);
  const cpu0 = procCpuMs(tg.pid);
  const db0 = await dbBackendsCpu();
  const r = await runWrk({
    base: tg.base,
    paths: tg.paths,
    keys: tg.keys,
    seconds,
    connections: CONNECTIONS,
    dir: work,
  });
  const per = (ms: number) => (ms * 1000) / Math.max(1, r.requests);
  const cpuUs = per(procCpuMs(tg.pid) - cpu0);
  let dbMs = 0;
  for (const [pid, ms] of await dbBackendsCpu()) dbMs += ms - (db0.get(pid) ?? 0);
  clearInterval(sampler);
  return { ...r, rssPeak: Math.max(rssPeak, procRss(tg.pid)), cpuUs, dbCpuUs: per(dbMs) };
}

/**
 * One target's figures over several slices: requests and time summed (req/s over the whole), CPU per request
 * weighted by requests, latency percentiles the median of the slices', RSS the peak.
 */
function combine(parts: Measured[]): Measured {
  const requests = parts.reduce((a, p) => a + p.requests, 0);
  const seconds = parts.reduce((a, p) => a + p.requests / Math.max(p.rps, 1e-9), 0);
  const weighted = (f: (p: Measured) => number) =>
    parts.reduce((a, p) => a + f(p) * p.requests, 0) / Math.max(1, requests);
  return {
    rps: requests / Math.max(seconds, 1e-9),
    p50Ms: median(parts.map((p) => p.p50Ms)),
    p99Ms: median(parts.map((p) => p.p99Ms)),
    requests,
    non2xx: parts.reduce((a, p) => a + p.non2xx, 0),
    socketErrors: parts.reduce((a, p) => a + p.socketErrors, 0),
    rssPeak: Math.max(...parts.map((p) => p.rssPeak)),
    cpuUs: weighted((p) => p.cpuUs),
    dbCpuUs: weighted((p) => p.dbCpuUs),
  };
}

console.log(
  `bench: Bun ${Bun.version}, wrk ${CONNECTIONS} connections × 2 threads, ${SLICES * SLICE_S} s per target in ${SLICES} interleaved slice(s), ${ROUNDS} round(s); TLS on every target`,
);
console.log(`service idle RSS ${rssIdle.toFixed(0)} MiB; warming up…`);
for (const t of active) await measure(t, 3);

const perTarget = (): Record<Target, Measured[]> => ({
  bun: [],
  elysia: [],
  work: [],
  couriers: [],
  track: [],
  warn: [],
  api: [],
});
const rounds = perTarget();
const p1: number[] = [];
const p2: number[] = [];
/** P1's ceiling: the bare server doing the answer's own work ÷ bare Elysia hello, per round. */
const ceiling: number[] = [];
/** Requests/s of `GET /v1/couriers` with LOG_LEVEL=warn ÷ with the default (access log on), per round. */
const accessRatio: number[] = [];
/** The access log's CPU per request: default − LOG_LEVEL=warn, µs, per round. */
const accessCpuUs: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  // The targets take turns in short slices, so that a change in the machine's speed during the round (a shared
  // host) falls on all of them alike instead of on whichever ran at that moment.
  const slices = perTarget();
  for (let s = 0; s < SLICES; s++) for (const t of active) slices[t].push(await measure(t, SLICE_S));
  for (const t of active) rounds[t].push(combine(slices[t]));
  const i = rounds.bun.length - 1;
  p1.push(rounds.couriers[i]!.rps / rounds.elysia[i]!.rps);
  p2.push(rounds.track[i]!.rps / rounds.couriers[i]!.rps);
  if (bareWork) ceiling.push(rounds.work[i]!.rps / rounds.elysia[i]!.rps);
  if (quiet) {
    accessRatio.push(rounds.warn[i]!.rps / rounds.couriers[i]!.rps);
    accessCpuUs.push(rounds.couriers[i]!.cpuUs - rounds.warn[i]!.cpuUs);
  }
  console.log(
    `round ${r + 1}: ` +
      active
        .map(
          (t) =>
            `${t} ${rounds[t][i]!.rps.toFixed(0)}/s (${rounds[t][i]!.cpuUs.toFixed(0)} + ${rounds[t][i]!.dbCpuUs.toFixed(0)} µs CPU)`,
        )
        .join(", ") +
      `; P1 ${p1[r]!.toFixed(3)}, P2 ${p2[r]!.toFixed(3)}`,
  );
}
const rssLoad = Math.max(...rounds.track.map((x) => x.rssPeak));
const rssIdleAfter = procRss(trackSvc.proc.pid);

// ---- P6: N concurrent asynchronous lookups ---------------------------------------------------------
let p6: { statuses: Record<string, number>; retry_after: string[]; seconds: number; slowest_s: number } | undefined;
if (!SKIP.has("p6")) {
  console.log(`P6: ${P6_N} concurrent asynchronous lookups (sandbox digit 9, answered after ${args["p6-async-s"]} s)…`);
  const prefix = String(100000 + Math.floor(Math.random() * 800000));
  const proc = Bun.spawn(["bun", "bench/p6-client.ts", svcBase, String(P6_N), keysFile, prefix], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "inherit",
  });
  children.push(proc);
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  // Its per-round lines (rates, CPU per delivery, the main thread's wait for a CPU) stay visible.
  for (const line of out.split("\n")) if (/^(warm-up|round \d+):/.test(line)) console.log(`  ${line}`);
  p6 = JSON.parse(out.trim().split("\n").at(-1)!);
}

// ---- P3 / P4 slots: the delivery worker and the re-check claim -------------------------------------
// These belong to bench/deliver.ts and bench/recheck.ts. Each is run as its own process and its JSON
// output is parsed; if either script grows an exported `measure(): Promise<{…}>` guarded by
// `import.meta.main`, import it here instead.
const p3 = SKIP.has("p3")
  ? undefined
  : await childJson("bench/deliver.ts", {}, (j) => (typeof j.ratio === "number" ? j : undefined));
const p4 = SKIP.has("p4")
  ? undefined
  : await childJson("bench/recheck.ts", { BENCH_SECONDS: "5" }, (j) => (j.bench === "recheck" ? j : undefined));

/** Runs a bench script and returns the first JSON object in its output that `pick` accepts. */
async function childJson(script: string, env: Record<string, string>, pick: (j: any) => any): Promise<any> {
  console.log(`running ${script}…`);
  const proc = Bun.spawn(["bun", script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "inherit",
  });
  children.push(proc);
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  // Its per-round lines (rates, CPU per delivery, the main thread's wait for a CPU) stay visible.
  for (const line of out.split("\n")) if (/^(warm-up|round \d+):/.test(line)) console.log(`  ${line}`);
  // A JSON object is either one line or an indented block ending in a line "}".
  for (const m of out.matchAll(/^\{.*\}$|^\{\n[\s\S]*?\n\}$/gm)) {
    try {
      const got = pick(JSON.parse(m[0]));
      if (got) return got;
    } catch {}
  }
  console.log(`${script}: no figures found in its output (exit ${proc.exitCode})`);
  return undefined;
}

// ---- the table -------------------------------------------------------------------------------------
const med = (t: Target, f: (x: Measured) => number) => median(rounds[t].map(f));
const rows: Row[] = active.map((t) => ({
  name: targets[t]!.name,
  rps: med(t, (x) => x.rps),
  p50: med(t, (x) => x.p50Ms),
  p99: med(t, (x) => x.p99Ms),
  rss: med(t, (x) => x.rssPeak),
  cpuUs: med(t, (x) => x.cpuUs),
  dbCpuUs: med(t, (x) => x.dbCpuUs),
  non2xx: rounds[t].reduce((a, x) => a + x.non2xx + x.socketErrors, 0),
}));
const claim = (size: string) => p4?.[`claim_1000_at_${size}`]?.median_ms as number | undefined;
printTable(rows, [
  {
    id: "P1",
    what: "GET /v1/couriers ÷ bare Elysia hello",
    value: median(p1).toFixed(3),
    goal: "≥ 0.6",
    ok: median(p1) >= 0.6,
    note: `default configuration (access log on); rounds ${p1.map((x) => x.toFixed(3)).join(" ")}`,
  },
  {
    id: "P1c",
    what: "P1's ceiling: the answer's own work, no framework",
    value: bareWork ? median(ceiling).toFixed(3) : "skipped",
    goal: "(reported)",
    note: bareWork
      ? `bare Bun.serve (key hash, id, 7 headers, same body) ÷ bare Elysia hello; rounds ${ceiling.map((x) => x.toFixed(3)).join(" ")}`
      : "",
  },
  {
    id: "P2",
    what: "GET /v1/track (delivered, 0 ms) ÷ P1",
    value: median(p2).toFixed(3),
    goal: "≥ 0.7",
    ok: median(p2) >= 0.7,
    note: `rounds ${p2.map((x) => x.toFixed(3)).join(" ")}`,
  },
  quiet
    ? {
        id: "AL",
        what: "access log: P1 req/s without it ÷ with it",
        value: `×${median(accessRatio).toFixed(3)}`,
        goal: "(reported)",
        note: `${median(accessCpuUs).toFixed(1)} µs CPU a request (default − LOG_LEVEL=warn); rounds ${accessRatio.map((x) => x.toFixed(3)).join(" ")}`,
      }
    : { id: "AL", what: "access log: P1 req/s without it ÷ with it", value: "skipped", goal: "(reported)" },
  p3
    ? {
        id: "P3",
        what: "webhook deliveries/s ÷ plain undici loop",
        value: String(p3.ratio),
        goal: "≥ 0.7",
        ok: p3.ratio >= 0.7,
        note: `${p3.worker_deliveries_per_s} vs ${p3.ceiling_undici_per_s}/s; rounds ${(p3.rounds ?? []).join(" ")}`,
      }
    : { id: "P3", what: "webhook deliveries/s ÷ plain undici loop", value: "skipped", goal: "≥ 0.7" },
  claim("1000000") && claim("10000")
    ? {
        id: "P4",
        what: "claim 1,000 re-checks at 1M ÷ at 10k rows",
        value: `×${(claim("1000000")! / claim("10000")!).toFixed(2)}`,
        goal: "≤ 1.5",
        ok: claim("1000000")! / claim("10000")! <= 1.5,
        note: `${claim("10000")} → ${claim("1000000")} ms`,
      }
    : { id: "P4", what: "claim 1,000 re-checks at 1M ÷ at 10k rows", value: "skipped", goal: "≤ 1.5" },
  {
    id: "P5",
    what: "service RSS idle / under P2 load (MiB)",
    value: `${rssIdle.toFixed(0)} / ${rssLoad.toFixed(0)}`,
    goal: "< 80 / < 150",
    ok: rssIdle < 80 && rssLoad < 150,
    note: `idle again after the runs: ${rssIdleAfter.toFixed(0)}`,
  },
  p6
    ? {
        id: "P6",
        what: `${P6_N} concurrent async lookups: 200/504/503/reset`,
        value: ["200", "504", "503", "reset"].map((s) => p6!.statuses[s] ?? 0).join("/"),
        goal: "reset = 0",
        ok: !p6.statuses.reset && Object.keys(p6.statuses).every((s) => ["200", "504", "503"].includes(s)),
        note: `all answered within ${p6.slowest_s} s; Retry-After ${p6.retry_after.join(",") || "-"}; all: ${JSON.stringify(p6.statuses)}`,
      }
    : { id: "P6", what: "concurrent async lookups", value: "skipped", goal: "reset = 0" },
]);

await cleanup();
process.exit(0);
