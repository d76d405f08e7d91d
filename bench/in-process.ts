/** The app on plain HTTP in the bench's own process, on a fresh test database, sandbox couriers, no logging. */
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/configure.ts";
import { systemClock } from "../src/lib/clock.ts";
import { silentLogger } from "../src/lib/log.ts";
import { createCourierBackends } from "../src/modules/couriers/registry.ts";
import { outboxEventSink } from "../src/modules/webhooks/delivery/outbox.ts";
import type { Simulator } from "../src/sandbox/server.ts";
import { createServices } from "../src/services.ts";
import { createTestDatabase, type TestDatabase } from "../test/helpers/db.ts";

export interface InProcessApp {
  tdb: TestDatabase;
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Stops the server and the courier backends, then drops the database. */
  stop(): Promise<void>;
}

/** Listens on a free loopback port; `poolMax` is the database pool's size, `simulator` the couriers' twin if any. */
export async function listenInProcess(poolMax: number, simulator?: Simulator): Promise<InProcessApp> {
  const tdb = await createTestDatabase({ max: poolMax });
  const config = loadConfig({ COURIER_MODE: "sandbox" });
  const backends = createCourierBackends({ config, clock: systemClock, log: silentLogger, simulator });
  const app = buildApp({
    config,
    db: tdb.db,
    clock: systemClock,
    log: silentLogger,
    secretsKey: new Uint8Array(32),
    backends,
    services: createServices(tdb.db, systemClock),
    onEvents: outboxEventSink,
  }).listen({ port: 0, hostname: "127.0.0.1", development: false });
  return {
    tdb,
    base: `http://127.0.0.1:${app.server!.port}`,
    async stop() {
      await app.stop(true);
      await backends.close();
      await tdb.drop();
    },
  };
}
