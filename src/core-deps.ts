/**
 * The infrastructure any module may take: configuration, database, clock, log and the secrets key. It names no
 * module's types, so the modules that other modules build on (couriers, health, the http plugins) can depend on it
 * without a loop; `AppDeps` (src/deps.ts) adds what the composition wires between modules.
 */
import type { Config } from "./config.ts";
import type { Db } from "./db/client.ts";
import type { Clock } from "./lib/clock.ts";
import type { Logger } from "./lib/log.ts";

export interface CoreDeps {
  config: Config;
  db: Db;
  clock: Clock;
  log: Logger;
  /** 32-byte key that encrypts webhook signing secrets at rest (AES-256-GCM, `SECRETS_KEY`; docs/deployment.md). */
  secretsKey: Uint8Array;
}
