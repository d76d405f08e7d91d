/**
 * Run as a child process by test/foundation/hostile.test.ts, once with
 * NODE_ENV=production and once without: starts the app on loopback (a fresh
 * test database), sends a fixed set of hostile requests and prints one JSON
 * line per answer — status, content type and body, request ids masked — so
 * the test can compare the two runs. Elysia reads NODE_ENV once, at import.
 *
 * `bun test/helpers/hostile-probe.ts serve [accounts]`: the service for the
 * 100,000-request fuzz run (bench/hostile.ts): the same app, started and left
 * running, with `accounts` Business accounts (default 40, so the per-minute
 * limits leave room) and a test webhook each; prints one JSON line
 * `{port, pid, keys, webhookIds}` and serves until SIGTERM. Its resolver
 * answers no DNS, so no test fire leaves the machine.
 */
import { buildApp } from "../../src/app.ts";
import { loadConfig } from "../../src/configure.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { createAccount, createApiKey } from "../../src/modules/accounts/service.ts";
import { createCourierBackends } from "../../src/modules/couriers/registry.ts";
import { outboxEventSink } from "../../src/modules/webhooks/delivery/outbox.ts";
import type { Resolver } from "../../src/modules/webhooks/delivery/address-guard.ts";
import { createTestDatabase } from "./db.ts";
import { servicesFor } from "./services.ts";
import { rawRequest } from "./raw-http.ts";

const serve = process.argv[2] === "serve";
const noResolution: Resolver = async (host) => {
  throw Object.assign(new Error(`no DNS in the fuzz service for ${host}`), { code: "ENOTFOUND" });
};
const tdb = await createTestDatabase({ max: serve ? 10 : 4 });
const config = loadConfig({ COURIER_MODE: "sandbox" });
const backends = createCourierBackends({ config, clock: systemClock, log: silentLogger });
const deps = {
  config,
  db: tdb.db,
  clock: systemClock,
  log: silentLogger,
  secretsKey: new Uint8Array(32),
  backends,
  services: servicesFor(tdb.db),
  onEvents: outboxEventSink,
};
const app = buildApp(serve ? ({ ...deps, resolver: noResolution } as typeof deps) : deps);
app.listen({ port: 0, hostname: "127.0.0.1", maxRequestBodySize: 1024 * 1024, development: false });
const port = app.server!.port!;

if (serve) {
  const keys: string[] = [];
  const webhookIds: string[] = [];
  for (let i = 0; i < Number(process.argv[3] ?? 40); i++) {
    const acc = await createAccount(tdb.db, { email: `fuzz${i}@example.com`, plan: "business" });
    const { key } = await createApiKey(tdb.db, acc.id);
    keys.push(key);
    const res = await fetch(`http://127.0.0.1:${port}/v1/webhooks`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ url: `https://hooks${i}.fuzz.invalid/h`, events: ["tracking.delivered"], mode: "test" }),
    });
    webhookIds.push(((await res.json()) as { data: { id: string } }).data.id);
  }
  console.log(JSON.stringify({ port, pid: process.pid, keys, webhookIds }));
  process.on("SIGTERM", async () => {
    await app.stop(true);
    await backends.close();
    await tdb.drop();
    process.exit(0);
  });
  await new Promise(() => {});
}
const account = await createAccount(tdb.db, { email: "probe@example.com", plan: "growth" });
const { key } = await createApiKey(tdb.db, account.id);

const json = { "content-type": "application/json" };
const requests: [string, RequestInit][] = [
  ["/v1/webhooks", { method: "POST", headers: json, body: "[".repeat(32_000) + "]".repeat(32_000) }],
  [
    "/v1/webhooks",
    { method: "POST", headers: { ...json, "x-api-key": key }, body: "[".repeat(32_000) + "]".repeat(32_000) },
  ],
  [
    "/v1/webhooks",
    {
      method: "POST",
      headers: { ...json, "x-api-key": key },
      body: '{"url":5,"events":"tracking.delivered","mode":"prod","description":5}',
    },
  ],
  [
    "/v1/webhooks",
    {
      method: "POST",
      headers: { ...json, "x-api-key": key },
      body: JSON.stringify({
        url: "https://example.com",
        events: Array(5000).fill(7),
        mode: "test",
        description: "x".repeat(600),
      }),
    },
  ],
  [
    "/v1/webhooks",
    {
      method: "POST",
      headers: { ...json, "x-api-key": key },
      body: "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    },
  ],
  ["/v1/webhooks", { method: "POST", headers: { ...json, "x-api-key": key }, body: "{not json" }],
  ["/v1/webhooks/wh_x/deliveries?limit=abc&cursor=%00", { headers: { "x-api-key": key } }],
  ["/v1/track?courier=delhivery", { headers: { "x-api-key": key } }],
  ["/v1/track?tracking_number=" + "9".repeat(5000), { headers: { "x-api-key": key } }],
  ["/v1/nowhere", { headers: { "x-api-key": key } }],
  ["/nowhere", {}],
];

const mask = (s: string) => s.replace(/req_[0-9a-f]{32}/g, "req_…");
for (const [path, init] of requests) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, init);
  console.log(JSON.stringify([path, res.status, res.headers.get("content-type"), mask(await res.text())]));
}
const bad = await rawRequest(port, "GET /v1/track HTTP/1.1\r\nHost: a b\r\n\r\n");
console.log(JSON.stringify(["Host: a b", bad.status, bad.headers["content-type"], mask(bad.body)]));

await app.stop(true);
await backends.close();
await tdb.drop();
process.exit(0);
