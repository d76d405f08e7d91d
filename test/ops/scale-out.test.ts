/**
 * Scale-out on one PostgreSQL, with real processes (docs/deployment.md,
 * Roles): 2 × ROLE=api and 2 × ROLE=worker share one database and one
 * SECRETS_KEY. Tracking and webhooks are driven through both API processes
 * while a loopback HTTPS receiver counts; one worker is killed with SIGKILL
 * mid-burst. Asserted: every event delivered at least once (none lost), no
 * shipment re-checked twice within one interval, the quota exact, and the
 * survivors' metrics consistent with what the database and the receiver saw.
 *
 * The courier is a real twin (the simulator, in this test process) that the
 * processes reach as a LIVE backend: the API processes call it directly, the
 * workers through a recording relay, so the relay sees exactly the re-checks.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { systemClock } from "../../src/lib/clock.ts";
import { createAccount, createApiKey } from "../../src/modules/accounts/service.ts";
import { startSimulator, type Simulator } from "../../src/sandbox/server.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";
import { freePort, insecureFetch, spawnService, type Proc } from "./process.ts";

const INTERVAL_S = 4;
const SHIPMENTS = 20;
let tdb: TestDatabase;
let sim: Simulator;
let receiver: Receiver;
let relay: ReturnType<typeof Bun.serve>;
const rechecks = new Map<string, number[]>(); // tracking number → times the workers called the courier
const procs: Proc[] = [];

beforeAll(async () => {
  tdb = await createTestDatabase({ max: 2 });
  sim = startSimulator({ clock: systemClock, stepSeconds: 3, asyncSeconds: 1 });
  receiver = await startReceiver();
  relay = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const awb = url.searchParams.get("waybill") ?? "";
      rechecks.set(awb, [...(rechecks.get(awb) ?? []), Date.now()]);
      return fetch(`${sim.url}${url.pathname}${url.search}`, {
        method: req.method,
        headers: req.headers,
        body: req.method === "GET" ? undefined : await req.arrayBuffer(),
      });
    },
  });
});
afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await Promise.all(procs.map((p) => p.exited));
  relay?.stop(true);
  receiver?.stop();
  await sim?.stop();
  await tdb?.drop();
});

/** The value of one sample line of a Prometheus text, 0 when absent. */
function sample(text: string, prefix: string): number {
  return text
    .split("\n")
    .filter((l) => l.startsWith(prefix))
    .reduce((s, l) => s + Number(l.split(" ").at(-1)), 0);
}

async function metricsOf(adminPort: number): Promise<string> {
  return (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
}

test("2 api + 2 worker processes on one database: every event delivered, no double re-check, quota exact, metrics consistent", async () => {
  const acc = await createAccount(tdb.db, { email: `scale-${Date.now()}@example.com`, plan: "growth" });
  const { key } = await createApiKey(tdb.db, acc.id);
  const common = {
    ...(await webhookEnv({ WEBHOOK_TIMEOUT_MS: "1000" })),
    DATABASE_URL: tdb.url,
    SECRETS_KEY: randomBytes(32).toString("base64url"),
    RECHECK_INTERVAL_SECONDS: String(INTERVAL_S),
    DELHIVERY_TOKEN: "sandbox-delhivery-token",
    LOG_LEVEL: "warn",
    // Four services and the suite share two cores: a starved process may wait seconds for the database, which
    // the default 4 s deadline would answer with 503 (that deadline has its own test, test/ops/partition.test.ts).
    DB_DEADLINE_SECONDS: "30",
  };
  const api = [0, 1].map(() => ({ port: freePort(), admin: freePort() }));
  const workers = [0, 1].map(() => ({ admin: freePort() }));
  for (const a of api)
    procs.push(
      spawnService({
        ...common,
        ROLE: "api",
        PORT: String(a.port),
        HOST: "127.0.0.1",
        ADMIN_PORT: String(a.admin),
        DELHIVERY_BASE_URL: sim.baseUrlFor("delhivery"),
      }),
    );
  // Short courier budgets and 1 s of lease slack keep the dead worker's leases short: re-checks
  // max(5 s, LEASE_SLACK_SECONDS), renewed while a worker lives (following/recheck.ts), deliveries 6 × 1 s + 1 s; its
  // claims come back in seconds instead of the default 30 s slack. Drains every second.
  const leases = {
    COURIER_TIMEOUT_MS: "1000",
    COURIER_ASYNC_BUDGET_MS: "1000",
    COURIER_CONCURRENCY: "64",
    LEASE_SLACK_SECONDS: "1",
    RECHECK_POLL_SECONDS: "1",
  };
  for (const w of workers)
    procs.push(
      spawnService({
        ...common,
        ...leases,
        ROLE: "worker",
        ADMIN_PORT: String(w.admin),
        DELHIVERY_BASE_URL: `http://127.0.0.1:${relay.port}/delhivery`,
      }),
    );
  const admins = [...api.map((a) => a.admin), ...workers.map((w) => w.admin)];
  const deadline = Date.now() + 45_000;
  for (const port of admins)
    while (
      (await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) !== 200
    ) {
      if (Date.now() > deadline)
        throw new Error(
          `process on admin port ${port} not ready:\n${procs.map((p) => p.stdout() + p.stderr()).join("\n---\n")}`,
        );
      await Bun.sleep(100);
    }
  const apiUrl = (i: number) => `https://127.0.0.1:${api[i % 2]!.port}`;
  const headers = { "x-api-key": key, "content-type": "application/json" };

  // Deliveries are held a little at the receiver, so the killed worker has some in flight.
  receiver.route("/hook", async () => {
    await Bun.sleep(150);
    return new Response("ok");
  });
  const created = await insecureFetch(`${apiUrl(0)}/v1/webhooks`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      url: receiver.url("/hook"),
      events: ["tracking.in_transit", "tracking.out_for_delivery", "tracking.delivered", "tracking.exception"],
      mode: "live",
    }),
  });
  expect(created.status).toBe(201);
  const webhook = ((await created.json()) as any).data;
  // A test fire through the OTHER API process decrypts the secret the first one stored.
  const testHook = await insecureFetch(`${apiUrl(0)}/v1/webhooks`, {
    method: "POST",
    headers,
    body: JSON.stringify({ url: receiver.url("/test-hook"), events: ["tracking.delivered"], mode: "test" }),
  });
  expect(testHook.status).toBe(201);
  const fired = await insecureFetch(`${apiUrl(1)}/v1/webhooks/${((await testHook.json()) as any).data.id}/test`, {
    method: "POST",
    headers,
    body: JSON.stringify({ event: "tracking.delivered" }),
  });
  expect(fired.status).toBeLessThan(300);
  await receiver.waitFor("/test-hook", 1, 15_000);

  // Scenario 1: in transit, then a step every 3 s until delivered (src/twin-kit/scenario.ts).
  const numbers = Array.from({ length: SHIPMENTS }, (_, i) => `7${String(i).padStart(10, "0")}1`);
  const answers = await Promise.all(
    numbers.map((n, i) =>
      insecureFetch(`${apiUrl(i)}/v1/track?courier=delhivery&tracking_number=${n}`, { headers: { "x-api-key": key } }),
    ),
  );
  expect(answers.map((r) => r.status)).toEqual(numbers.map(() => 200));
  const tracked = answers.length;

  // Mid-burst: kill -9 the first worker once re-check deliveries are flowing.
  const live = () => receiver.on("/hook").filter((r) => r.headers["x-webhook-mode"] === "live");
  const burst = Date.now() + 30_000;
  while (live().length < SHIPMENTS + 5 && Date.now() < burst) await Bun.sleep(50);
  procs[2]!.kill("SIGKILL");
  await procs[2]!.exited;

  // Everything settles: every shipment delivered, nothing pending in the outbox (leases of the dead worker run out).
  const settle = Date.now() + 90_000;
  for (;;) {
    const [s] = await tdb.sql`select
      (select count(*)::int from shipments where state <> 'delivered') as moving,
      (select count(*)::int from deliveries where state = 'pending') as pending`;
    if (s!.moving === 0 && s!.pending === 0) break;
    if (Date.now() > settle) throw new Error(`not settled: ${JSON.stringify(s)}`);
    await Bun.sleep(250);
  }

  // Every event of a followed shipment was delivered at least once: none lost.
  const expected = await tdb.sql`
    select s.tracking_number, e.type, e.enqueued_at from deliveries d join events e on e.id = d.event_id join shipments s on s.id = d.shipment_id
    where d.webhook_id = ${webhook.id} and d.mode = 'live'`;
  expect(expected.length).toBeGreaterThanOrEqual(SHIPMENTS); // at least tracking.delivered per shipment
  const got = new Set(
    live().map((r) => `${r.json.data.tracking_number}|${r.json.event}|${Date.parse(r.json.enqueued_at)}`),
  );
  const missing = expected.filter(
    (e) => !got.has(`${e.tracking_number}|${e.type}|${new Date(e.enqueued_at).getTime()}`),
  );
  expect(missing).toEqual([]);
  const states =
    await tdb.sql`select state, count(*)::int as n from deliveries where webhook_id = ${webhook.id} group by state`;
  expect(states.map((r) => [r.state, r.n])).toEqual([["delivered", expected.length]]);

  // No shipment re-checked twice within one interval (± 10 % jitter), whichever worker claimed it.
  for (const [n, times] of rechecks)
    for (let i = 1; i < times.length; i++)
      expect([n, times[i]! - times[i - 1]! >= INTERVAL_S * 900 - 250]).toEqual([n, true]);
  expect([...rechecks.values()].reduce((s, t) => s + t.length, 0)).toBeGreaterThanOrEqual(SHIPMENTS);

  // The quota is exact: one unit per 200 answer, across both API processes.
  const [usage] =
    await tdb.sql`select coalesce(sum(used), 0)::int as used from usage_counters where account_id = ${acc.id}`;
  expect(usage!.used).toBe(tracked);

  // Survivors' metrics agree with the database and the receiver.
  const apiMetrics = await Promise.all(api.map((a) => metricsOf(a.admin)));
  expect(
    apiMetrics.reduce(
      (s, t) =>
        s +
        sample(t, 'courier_tracking_http_request_duration_seconds_count{route="/v1/track",method="GET",status="200"}'),
      0,
    ),
  ).toBe(tracked);
  const survivor = await metricsOf(workers[1]!.admin);
  const deliveredBySurvivor = sample(
    survivor,
    'courier_tracking_webhook_delivery_attempts_total{outcome="delivered",mode="live"}',
  );
  expect(deliveredBySurvivor).toBeGreaterThan(0);
  expect(deliveredBySurvivor).toBeLessThanOrEqual(live().length);
  expect(sample(survivor, "courier_tracking_rechecks_total")).toBeLessThanOrEqual(
    [...rechecks.values()].reduce((s, t) => s + t.length, 0),
  );
  for (const t of [...apiMetrics, survivor]) {
    expect(sample(t, "courier_tracking_outbox_due ")).toBe(0);
    expect(sample(t, "courier_tracking_recheck_due_backlog ")).toBe(0);
  }

  // The survivors drain and stop cleanly. An API process stopped right after a lookup (before its quota block
  // could go back for being idle) gives its unused units back on the way out: the row counts that lookup only.
  const last = await insecureFetch(`${apiUrl(0)}/v1/track?courier=delhivery&tracking_number=${numbers[0]}`, {
    headers,
  });
  expect(last.status).toBe(200);
  for (const i of [0, 1, 3]) procs[i]!.kill("SIGTERM");
  expect(await Promise.all([0, 1, 3].map((i) => procs[i]!.exited))).toEqual([0, 0, 0]);
  const [after] =
    await tdb.sql`select coalesce(sum(used), 0)::int as used from usage_counters where account_id = ${acc.id}`;
  expect(after!.used).toBe(tracked + 1);
  // The same units by day (usage_daily, written in the same statements): the days sum to the month.
  const [days] =
    await tdb.sql`select coalesce(sum(used), 0)::int as used from usage_daily where account_id = ${acc.id}`;
  expect(days!.used).toBe(tracked + 1);
  // Every authenticated request is in the shared per-minute windows, the last ones written on the way out
  // (two webhook creations, one test fire, the lookups and the last lookup).
  const [counted] =
    await tdb.sql`select coalesce(sum(count), 0)::int as n from rate_windows where key = ${"rl:" + acc.id}`;
  expect(counted!.n).toBe(3 + numbers.length + 1);
}, 180_000);
