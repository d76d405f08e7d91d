/**
 * The infrastructure any module may take: configuration, database, clock, log and the secrets key. It names no
 * module's types, so the modules that other modules build on (couriers, health, the http plugins) can depend on it
 * without a loop; `AppDeps` (src/deps.ts) adds what the composition wires between modules.
 */
import type { Config } from "./config.ts";
import type { Db, Tx } from "./db/client.ts";
import type { StoredEvent } from "./domain/events.ts";
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

/**
 * Where the tracking module publishes the events it writes (docs/architecture.md, "Table owners"): called inside
 * the transaction `tx` that stores them, so whatever the sink writes commits or rolls back with them. Returns the
 * rows the sink wrote (the webhooks module's sink: outbox rows). Wired by the composition (`AppDeps.onEvents`), so
 * tracking names no consumer of its events.
 * @throws whatever the sink's writes throw; the record transaction then rolls back as a whole.
 */
export type EventSink = (tx: Tx, events: readonly StoredEvent[]) => Promise<number>;
