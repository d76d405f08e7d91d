/**
 * Nothing the service prints gives a secret away. Real processes through hostile input and failures: a bad
 * configuration, a database that refuses the connection, then a running service (LOG_LEVEL=debug, the most it
 * says) given wrong and garbage API keys, a wrong metrics token, a sign-up (password, API key shown once), a
 * refused weak password and a wrong sign-in password, webhooks created and their signing secret rotated, a
 * test fire answered 401 and live deliveries answered 500 (retried, each attempt logged). Then everything the
 * processes wrote to stdout and stderr is searched for every secret the test created or sent: 0 hits.
 *
 * Not searched for: the development account's key and sign-in link, which a sandbox start prints once by
 * design (docs/deployment.md); this test never uses them.
 *
 * NETWORK SAFETY: the service and the webhook receiver listen on 127.0.0.1 only.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema/index.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";
import { Client, keyOf } from "../dashboard/support.ts";
import { freePort, spawnService, type Proc } from "./process.ts";

let tdb: TestDatabase;
let rx: Receiver;
const procs: Proc[] = [];
beforeAll(async () => {
  tdb = await createTestDatabase({ max: 1 });
  rx = await startReceiver();
});
afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await Promise.all(procs.map((p) => p.exited));
  rx.stop();
  await tdb.drop();
});
const spawn = (env: Record<string, string>) => {
  const p = spawnService(env);
  procs.push(p);
  return p;
};
const hex = (n: number) => randomBytes(n).toString("hex");

/** Every secret the test creates or sends, by what it is (for a readable failure). */
const secrets: Record<string, string> = {};
const keep = (name: string, value: string) => {
  secrets[name] = value;
  return value;
};

/** `url` with `password` as its user's password (the test cluster trusts loopback and ignores it). */
const withPassword = (url: string, password: string) =>
  url.replace("postgres://postgres@", `postgres://postgres:${password}@`);

test("hostile input and failures: nothing printed contains a secret", async () => {
  const dbPassword = keep("database password", `dbpw-${hex(10)}`);
  const secretsKey = keep("SECRETS_KEY", randomBytes(32).toString("base64url"));
  const metricsToken = keep("METRICS_TOKEN", `metrics-${hex(12)}`);

  // 1. A bad configuration, and 2. a database that refuses the connection.
  const bad = spawn({
    DATABASE_URL: `postgresx://app:${dbPassword}@127.0.0.1:5432/app`,
    SECRETS_KEY: `${secretsKey} `,
    METRICS_TOKEN: metricsToken.slice(0, 9),
  });
  expect(await bad.exited).toBe(1);
  const refused = spawn({
    DATABASE_URL: withPassword(tdb.url, dbPassword).replace(/\/[^/]+$/, `/ct_missing_${hex(4)}`),
    SECRETS_KEY: secretsKey,
    DB_CONNECT_TIMEOUT_SECONDS: "2",
  });
  expect(await refused.exited).toBe(1);

  // 3. The service, on the test database, behind a "proxy" (plain HTTP on loopback).
  const port = freePort();
  const svc = spawn({
    ...(await webhookEnv({ WEBHOOK_RETRY_SCHEDULE: "1,1,1,1,1" })),
    DATABASE_URL: withPassword(tdb.url, dbPassword),
    SECRETS_KEY: secretsKey,
    METRICS_TOKEN: metricsToken,
    TRUST_PROXY: "1",
    HOST: "127.0.0.1",
    PORT: String(port),
    COURIER_MODE: "sandbox",
    SANDBOX_STEP_SECONDS: "2",
    SANDBOX_ASYNC_SECONDS: "1",
    RECHECK_INTERVAL_SECONDS: "1",
    RECHECK_POLL_SECONDS: "1",
    LOG_LEVEL: "debug",
  });
  await svc.waitForLine((l) => String(l.msg).startsWith("listening on"), 30_000);
  const base = `http://127.0.0.1:${port}`;
  const proxied = { "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.50" };
  const call = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(`${base}${path}`, { ...init, headers: { ...proxied, ...init.headers }, redirect: "manual" });

  // Dashboard: a refused weak password, a sign-up (its API key is shown once), a wrong sign-in password.
  const dash = new Client({
    handle: (r: Request) => fetch(new Request(r.url.replace("http://localhost", base), r), { redirect: "manual" }),
  });
  dash.headers = { ...proxied };
  const email = `grep-${hex(4)}@example.com`;
  const weak = keep("weak password", `Password${hex(2)}!`.replace(/[a-f0-9]{4}!$/, "2024!"));
  const csrf = await dash.csrf("/dashboard/sign-up");
  expect((await dash.post("/dashboard/sign-up", { _csrf: csrf, email, password: weak }))[0].status).toBe(422);
  const password = keep("password", `violet kettle ${hex(6)} orbit`);
  const apiKey = keep("API key", await dash.signUp(email, password));
  expect(apiKey).toStartWith("ctk_");
  const other = new Client(dash["app"]);
  other.headers = { ...proxied };
  expect((await other.signIn(email, keep("wrong password", `wrong horse ${hex(6)} battery`))).status).not.toBe(303);
  await tdb.db.update(accounts).set({ plan: "business" }).where(eq(accounts.email, email));

  // Wrong and garbage keys, in the header and where a careless client puts them.
  const nearMiss = keep("near-miss key", apiKey.slice(0, -1) + (apiKey.endsWith("A") ? "B" : "A"));
  const garbage = keep("garbage key", `ctk_${randomBytes(32).toString("base64url")}`);
  const junk = keep("junk key", `not-a-key-${hex(16)}`);
  for (const k of [nearMiss, garbage, junk])
    expect((await call("/v1/couriers", { headers: { "x-api-key": k } })).status).toBe(401);
  expect((await call(`/v1/couriers?api_key=${garbage}`)).status).toBe(401);
  expect((await call("/v1/couriers", { headers: { authorization: `Bearer ${junk}` } })).status).toBe(401);
  expect(
    (
      await call("/metrics", {
        headers: { authorization: `Bearer ${keep("wrong metrics token", `metrics-${hex(12)}`)}` },
      })
    ).status,
  ).not.toBe(200);
  expect((await call("/metrics", { headers: { authorization: `Bearer ${metricsToken}` } })).status).toBe(200);

  // Webhooks: a live one answered 500 (its URL carries a token in the query), a test one answered 401.
  const marker = keep("receiver's answer", `receiver-body-${hex(8)}`);
  rx.route("/grep500", () => new Response(marker, { status: 500 }));
  rx.route("/grep401", () => new Response(marker, { status: 401 }));
  const queryToken = keep("URL query token", `qt${hex(10)}`);
  const authed = { "x-api-key": apiKey, "content-type": "application/json" };
  const events = ["tracking.updated", "tracking.in_transit", "tracking.out_for_delivery", "tracking.delivered"];
  const live = await call("/v1/webhooks", {
    method: "POST",
    headers: authed,
    body: JSON.stringify({ url: `${rx.url("/grep500")}?token=${queryToken}`, events, mode: "live" }),
  });
  expect(live.status).toBe(201);
  keep("signing secret", ((await live.json()) as { data: { secret: string } }).data.secret);
  const rotated = await call("/v1/webhooks/rotate-secret", { method: "POST", headers: authed });
  keep("rotated signing secret", ((await rotated.json()) as { data: { secret: string } }).data.secret);
  const testHook = await call("/v1/webhooks", {
    method: "POST",
    headers: authed,
    body: JSON.stringify({ url: rx.url("/grep401"), events, mode: "test" }),
  });
  const testId = ((await testHook.json()) as { data: { id: string } }).data.id;
  expect((await call(`/v1/webhooks/${testId}/test`, { method: "POST", headers: authed })).status).toBe(200);
  expect(rx.on("/grep401").length).toBe(1);

  // A followed sandbox shipment steps every 2 s; its events go to the 500 receiver and are retried.
  expect((await call("/v1/track?courier=delhivery&tracking_number=1234567890111", { headers: authed })).status).toBe(
    200,
  );
  await svc.waitForLine((l) => l.msg === "webhook delivery attempt failed" && l.attempt >= 2, 60_000);

  svc.kill("SIGTERM");
  expect(await svc.exited).toBe(0);

  const printed = procs.map((p) => p.stdout() + p.stderr()).join("\n");
  const leaks = Object.entries(secrets)
    .filter(([, v]) => printed.includes(v))
    .map(([k]) => k);
  expect(leaks).toEqual([]);
  // The failures did print: the grep looked at something.
  expect(printed).toContain("invalid configuration: DATABASE_URL");
  expect(printed).toContain("refused the connection");
  expect(printed).toContain("webhook delivery attempt failed");
  expect(Object.keys(secrets).length).toBeGreaterThanOrEqual(15);
}, 120_000);

test("keyOf finds the key the sign-up page shows (the helper the grep relies on)", () => {
  expect(keyOf(`<input value="ctk_${"a".repeat(43)}">`)).toBe(`ctk_${"a".repeat(43)}`);
});
