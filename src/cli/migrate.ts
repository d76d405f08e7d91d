/** `bun run migrate`: applies the committed migrations to `DATABASE_URL` (once per release) and exits. */
import { ConfigError } from "../config/index.ts";
import { configFromProcess } from "../configure.ts";
import { DatabaseUnreachableError, describeDatabaseUrl, waitForDatabase } from "../db/client.ts";
import { migrateDatabase } from "../db/migrate.ts";
import { createLogger } from "../lib/log.ts";

const boot = createLogger("info", { service: "courier-tracking-api", component: "migrate" });
try {
  const config = configFromProcess();
  const log = createLogger(config.logLevel, { service: "courier-tracking-api", component: "migrate" });
  if (!config.databaseUrl)
    throw new ConfigError("DATABASE_URL", "is required to run migrations (the embedded database migrates at start)");
  await waitForDatabase(config.databaseUrl, { timeoutSeconds: config.dbConnectTimeoutSeconds, log });
  const started = performance.now();
  await migrateDatabase(config.databaseUrl);
  log.info("migrations applied", {
    database: describeDatabaseUrl(config.databaseUrl),
    ms: Math.round(performance.now() - started),
  });
  process.exit(0);
} catch (err) {
  if (err instanceof ConfigError) boot.error("invalid configuration", { problems: err.problems });
  else if (err instanceof DatabaseUnreachableError) boot.error(err.message);
  else boot.error("migration failed", { error: err as Error });
  process.exit(1);
}
