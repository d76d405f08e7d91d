/**
 * Boot: config → secrets key → database (embedded when DATABASE_URL is unset)
 * → migrations → courier backends (simulator in sandbox mode) → app → jobs →
 * listen (TLS). SIGTERM/SIGINT drain in the reverse order.
 *
 * ROLE (CONTRACT 10): `api` serves HTTP only, `worker` runs the re-check
 * scheduler and the webhook delivery worker only, `all` (default) both.
 */
import { buildApp } from "./app.ts";
import { ConfigError, configFromProcess, type Config } from "./config.ts";
import { openDatabase } from "./db/client.ts";
import { migrateDatabase } from "./db/migrate.ts";
import { systemClock } from "./lib/clock.ts";
import { createLogger } from "./lib/log.ts";
import { loadSecretsKey } from "./lib/secrets-key.ts";
import { loadTls } from "./http/tls.ts";
import { ensureDevAccount } from "./modules/accounts/dev-account.ts";
import { createCourierBackends } from "./modules/couriers/registry.ts";
import { createDeliveryWorker } from "./modules/webhooks/worker.ts";
import { startSimulator } from "./sandbox/server.ts";
import { createScheduler } from "./scheduler/index.ts";

const bootStarted = performance.now();

let config: Config;
try {
  config = configFromProcess();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(1);
  }
  throw err;
}

const log = createLogger(config.logLevel, { service: "courier-tracking-api" });
const clock = systemClock;
const secretsKey = loadSecretsKey(config.secretsKey, config.dataDir);
const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, log });
await migrateDatabase(database.url);

const sim =
  config.courierMode === "sandbox"
    ? startSimulator({ clock, stepSeconds: config.sandboxStepSeconds, asyncSeconds: config.sandboxAsyncSeconds, port: config.sandboxPort })
    : undefined;
const backends = createCourierBackends({ config, clock, log, sandboxBaseUrl: sim?.baseUrlFor });
if (sim) log.info(`sandbox couriers: every adapter talks to the built-in simulator at ${sim.url} (scenario = last digit of the tracking number)`);
const availability = backends.describe();
log.info("couriers", {
  live: Object.keys(availability).filter((k) => availability[k] === "live"),
  sandbox: Object.keys(availability).filter((k) => availability[k] === "sandbox"),
  unavailable: Object.keys(availability).filter((k) => availability[k] === "unavailable"),
});

const deps = { config, db: database.db, clock, log, secretsKey, backends };

if (config.courierMode === "sandbox") {
  const dev = await ensureDevAccount(database.db);
  if (dev) log.info(`development account created on plan growth: ${dev.email}; API key (shown once): ${dev.key}`);
}

const worker = config.role !== "api" ? createDeliveryWorker(deps) : undefined;
const scheduler = config.role !== "api" ? createScheduler(deps) : undefined;
await worker?.start();
await scheduler?.start();

let server: { stop(closeActive?: boolean): Promise<void> } | undefined;
if (config.role !== "worker") {
  const app = buildApp(deps);
  const tls = config.trustProxy === undefined ? await loadTls({ tls: config.tls, dataDir: config.dataDir }) : undefined;
  app.listen({
    port: config.port,
    hostname: config.host,
    maxRequestBodySize: 1024 * 1024,
    ...(tls ? { tls: { cert: tls.cert, key: tls.key } } : {}),
  });
  server = app.server ?? undefined;
  const scheme = tls ? "https" : "http (behind a TLS-terminating proxy)";
  log.info(`listening on ${scheme}://${config.host}:${config.port}`, {
    tls: tls ? tls.source : "proxy",
    cert: tls?.certFile,
    docs: `${config.publicBaseUrl}/docs`,
    ready_ms: Math.round(performance.now() - bootStarted),
  });
} else {
  log.info("worker started", { ready_ms: Math.round(performance.now() - bootStarted) });
}

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info("shutting down", { signal });
  const timer = setTimeout(() => {
    log.error("shutdown timed out; exiting");
    process.exit(1);
  }, 30_000);
  try {
    await server?.stop(false);
    await scheduler?.stop({ timeout: 10_000 });
    await worker?.stop({ timeout: 10_000 });
    await backends.close();
    await sim?.stop();
    await database.close();
  } catch (err) {
    log.error("error during shutdown", { error: err as Error });
  }
  clearTimeout(timer);
  log.info("stopped");
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
