/** The infrastructure any module may take; it names no module's types, so depending on it never closes a loop. */
import type { Config } from "./config/index.ts";
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
 * Where the tracking module publishes the events it writes: called inside `tx`, so the sink's rows commit or roll back
 * with them; returns the rows written. @throws whatever the sink's writes throw (the transaction rolls back)
 */
export type EventSink = (tx: Tx, events: readonly StoredEvent[]) => Promise<number>;
