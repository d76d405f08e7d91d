/**
 * Boot: config → secrets key → database → migrations → key check → couriers → internal port → jobs → listen; every
 * start-up failure is ONE clear JSON line and exit 1. SIGTERM/SIGINT drain in reverse, the embedded PostgreSQL
 * last (docs/deployment.md#start-up-and-shutdown). ROLE: docs/deployment.md#roles-and-how-many-of-each.
 */
import { buildApp } from "./app.ts";
import { ConfigError, type Config } from "./config/index.ts";
import { configFromProcess } from "./configure.ts";
import { withoutSecrets } from "./config/secrets.ts";
import { DatabaseUnreachableError, openDatabase, type Database } from "./db/client.ts";
import { migrateDatabase } from "./db/migrate.ts";
import { systemClock, type Clock } from "./lib/clock.ts";
import { createLogger } from "./lib/log.ts";
import { loadSecretsKey, SecretsKeyMismatchError, verifySecretsKey, type SecretsKey } from "./secrets/key.ts";
import { loadTls } from "./http/tls.ts";
import { ensureDevAccount } from "./modules/accounts/dev-account.ts";
import { devPasswordLink } from "./modules/accounts/password-links.ts";
import { ADAPTERS } from "./modules/couriers/adapters/index.ts";
import { createCourierBackends, type CourierBackends } from "./modules/couriers/registry.ts";
import { startAdminServer } from "./modules/health/admin-server.ts";
import { createLifecycle } from "./modules/health/state.ts";
import { instrumentAdapters } from "./modules/couriers/instrument.ts";
import { outboxEventSink } from "./modules/webhooks/delivery/outbox.ts";
import { parseDegrade, SIMULATOR_HOST, startSimulator } from "./sandbox/server.ts";
import { createScheduler } from "./scheduler/index.ts";
import { createServices, type Services } from "./services.ts";
import { setPasswordHashMemory } from "./modules/accounts/password.ts";
import { setBodyTimeout } from "./http/body.ts";
import { startTracing } from "./lib/tracing.ts";
import { SERVICE_VERSION } from "./lib/version.ts";
import { listenOrExplain, PortInUseError, publicListenOptions } from "./main-listen.ts";
import { stopAll, type Running } from "./main-stop.ts";

const SERVICE = { service: "courier-tracking-api" };
const bootStarted = performance.now();
const lifecycle = createLifecycle({ starting: true });

const running: Running = {};

let config: Config;
try {
  config = configFromProcess();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  createLogger("info", SERVICE).error(err.message, { problems: err.problems });
  process.exit(1);
}
// Buffered (lib/log.ts): every exit below flushes first.
const log = createLogger(config.logLevel, SERVICE, undefined, { buffered: true });
setPasswordHashMemory(config.passwordHashMemoryKib);
setBodyTimeout(config.bodyTimeoutMs);
// Before anything is built: the app wraps `fetch` in spans only when tracing is on.
if (
  startTracing({
    endpoint: config.otelExporterOtlpEndpoint,
    serviceName: config.otelServiceName,
    resourceAttributes: config.otelResourceAttributes,
    serviceVersion: SERVICE_VERSION,
    onError: (err) => log.warn("trace export failed", { error: secretFree(err) }),
  })
)
  log.info("traces on", {
    collector: config.otelExporterOtlpEndpoint ? new URL(config.otelExporterOtlpEndpoint).host : null,
    service_name: config.otelServiceName,
    service_version: SERVICE_VERSION,
  });

/** Opens the database, migrates it and checks the secrets key against it. */
async function openChecked(secretsKey: SecretsKey, generated: boolean): Promise<Database> {
  running.database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    log,
    connectTimeoutSeconds: config.dbConnectTimeoutSeconds,
    deadlineSeconds: config.dbDeadlineSeconds,
  });
  const database = running.database;
  await migrateDatabase(database.url);
  const keyCheck = await verifySecretsKey(database.db, secretsKey);
  log.info("secrets key checked", {
    source: generated ? "DATA_DIR/secrets.key" : "SECRETS_KEY",
    check: keyCheck,
    previous_key: Boolean(secretsKey.previous),
  });
  return database;
}

/** The simulator (sandbox mode), the services and the courier backends, and the lines saying which couriers are live. */
function startCouriers(database: Database, clock: Clock): { services: Services; backends: CourierBackends } {
  running.sim =
    config.courierMode === "sandbox"
      ? listenOrExplain({ port: config.sandboxPort, host: SIMULATOR_HOST, variable: "SANDBOX_PORT" }, () =>
          startSimulator({
            clock,
            stepSeconds: config.sandboxStepSeconds,
            asyncSeconds: config.sandboxAsyncSeconds,
            port: config.sandboxPort,
            degrade: parseDegrade(config.sandboxDegrade),
          }),
        )
      : undefined;
  const sim = running.sim;
  running.services = createServices(database.db, clock);
  const services = running.services;
  running.backends = createCourierBackends({
    config,
    clock,
    log,
    simulator: sim,
    adapters: instrumentAdapters(ADAPTERS),
    db: database.db,
    budgets: services.courierBudgets,
    calls: services.courierCalls,
  });
  const backends = running.backends;
  if (sim)
    log.info(
      `sandbox couriers: every adapter without credentials talks to the built-in simulator at ${sim.url} (scenario = last digit of the tracking number)`,
    );
  if (sim && config.databaseUrl)
    log.warn("COURIER_MODE=sandbox with DATABASE_URL: couriers without credentials answer with simulated data");
  const availability = backends.describe();
  const by = (a: string) => Object.keys(availability).filter((k) => availability[k] === a);
  if (!config.smtpUrl)
    log.info("SMTP_URL is unset: owner alerts are shown in the dashboard only, not emailed (docs/alerts.md)");
  log.info("couriers", {
    mode: config.courierMode,
    live: by("live"),
    sandbox: by("sandbox"),
    unavailable: by("unavailable"),
  });
  return { services, backends };
}

async function start(): Promise<void> {
  const clock = systemClock;
  const { key: secretsKey, generated } = loadSecretsKey(config);
  const database = await openChecked(secretsKey, generated);
  const { services, backends } = startCouriers(database, clock);
  const deps = {
    config,
    db: database.db,
    clock,
    log,
    secretsKey,
    backends,
    services,
    lifecycle,
    onEvents: outboxEventSink,
  };

  // Only a process that serves the public port creates the development account: its link points at that port.
  if (config.courierMode === "sandbox" && config.role !== "worker") {
    const dev = await ensureDevAccount(database.db);
    if (dev) log.info(`development account created on plan growth: ${dev.email}; API key (shown once): ${dev.key}`);
    if (dev)
      log.info(
        `dashboard sign-in for ${dev.email} (one-time link, 24 h, sets a password): ${config.publicBaseUrl}${await devPasswordLink(database.db, dev.email, clock.now())}`,
      );
  }

  const adminPort = config.adminPort;
  if (adminPort !== undefined) {
    running.admin = listenOrExplain({ port: adminPort, host: config.adminHost, variable: "ADMIN_PORT" }, () =>
      startAdminServer(deps, { host: config.adminHost, port: adminPort, lifecycle }),
    );
    log.info(`internal port on http://${config.adminHost}:${running.admin.port}`, {
      serves: ["/healthz", "/readyz", "/metrics"],
    });
  } else if (config.role === "worker")
    log.warn("ROLE=worker without ADMIN_PORT: this process serves no health checks or metrics");

  if (config.role !== "api") {
    running.scheduler = createScheduler(deps);
    await running.scheduler.start();
  }

  if (config.role !== "worker") {
    const app = buildApp(deps);
    const tls =
      config.trustProxy === undefined ? await loadTls({ tls: config.tls, dataDir: config.dataDir }) : undefined;
    listenOrExplain(config, () => app.listen(publicListenOptions(config, tls)));
    running.server = app;
    lifecycle.starting = false;
    const url = `${tls ? "https" : "http"}://${config.host}:${config.port}`;
    log.info(tls ? `listening on ${url}` : `listening on ${url} (plain HTTP behind a TLS-terminating proxy)`, {
      role: config.role,
      version: SERVICE_VERSION,
      tls: tls ? tls.source : "proxy",
      cert: tls?.certFile,
      docs: `${config.publicBaseUrl}/docs`,
      ready_ms: Math.round(performance.now() - bootStarted),
    });
  } else {
    lifecycle.starting = false;
    log.info("worker started", {
      role: config.role,
      version: SERVICE_VERSION,
      ready_ms: Math.round(performance.now() - bootStarted),
    });
  }
}

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  lifecycle.draining = true;
  const started = performance.now();
  const graceMs = config.shutdownGraceSeconds * 1000;
  log.info("shutting down", { signal, grace_s: config.shutdownGraceSeconds });
  // Hard stop if a step hangs past the grace (plus time for the database to close).
  setTimeout(() => {
    log.error("shutdown did not finish in time; exiting");
    log.flush();
    process.exit(1);
  }, graceMs + 15_000).unref();
  await stopAll(running, log, graceMs);
  log.info("stopped", { signal, ms: Math.round(performance.now() - started) });
  log.flush();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));

/** `err` with no configured secret value in its messages; name and code kept. */
function secretFree(err: unknown): Error {
  const e = err instanceof Error ? err : new Error(String(err));
  const clean = Object.assign(new Error(withoutSecrets(e.message, config)), { code: (e as { code?: unknown }).code });
  clean.name = e.name;
  if (e.cause instanceof Error) clean.cause = secretFree(e.cause);
  return clean;
}

/** Time given to stopping what started after a failed start or an uncaught error, ms. */
const FAILURE_STOP_MS = 5_000;
let failing: Promise<void> | undefined;
/** Stops what started within {@link FAILURE_STOP_MS}, then exits 1; runs once (shared by every failure). */
function stopAndFail(): Promise<void> {
  stopping = true;
  lifecycle.draining = true;
  if (!failing) {
    setTimeout(() => {
      log.flush();
      process.exit(1);
    }, FAILURE_STOP_MS + 5_000).unref();
    failing = stopAll(running, createLogger("silent"), FAILURE_STOP_MS).finally(() => {
      log.flush();
      process.exit(1);
    });
  }
  return failing;
}

/**
 * Last resort for an error nothing caught: one JSON line without the stack, then {@link stopAndFail} (Bun's default
 * would leave the embedded PostgreSQL running). During a shutdown it is logged and the shutdown goes on.
 */
function crashed(what: string, err: unknown): void {
  log.error(`${what}; stopping`, { error: secretFree(err) });
  // The stop that follows may itself fail harder.
  log.flush();
  if (stopping && !failing) return;
  void stopAndFail();
}
process.on("uncaughtException", (err) => crashed("uncaught error", err));
process.on("unhandledRejection", (err) => crashed("unhandled rejection", err));

try {
  await start();
} catch (err) {
  // A driver's or library's message may quote configuration (a connection string).
  if (err instanceof ConfigError) log.error(err.message, { problems: err.problems });
  else if (
    err instanceof DatabaseUnreachableError ||
    err instanceof SecretsKeyMismatchError ||
    err instanceof PortInUseError
  )
    log.error(withoutSecrets(err.message, config));
  else log.error("start failed", { error: secretFree(err) });
  await stopAndFail();
}
