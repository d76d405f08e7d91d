/**
 * The services (src/services.ts) of each pool a test uses, built once per pool: the app of `testContext` and a
 * test reading its quota blocks or counters share one instance, as routes and main.ts's shutdown do in production.
 * A replica (a second pool) gets its own. Test-only: production code receives its services through `AppDeps`.
 */
import type { Db } from "../../src/db/client.ts";
import { systemClock, type Clock } from "../../src/lib/clock.ts";
import { createServices, type Services } from "../../src/services.ts";

const byPool = new Map<Db, Services>();

/** The services of pool `db`, built on first use with `clock` (default the system clock). */
export function servicesFor(db: Db, clock: Clock = systemClock): Services {
  let s = byPool.get(db);
  if (!s) {
    s = createServices(db, clock);
    byPool.set(db, s);
  }
  return s;
}

/** The quota blocks of pool `db` (accounts/quota-lease.ts). */
export const quotaLeasesFor = (db: Db) => servicesFor(db).quotaLeases;
/** The per-minute rate counter of pool `db` (accounts/rate-counter.ts). */
export const rateCounterFor = (db: Db) => servicesFor(db).rateCounter;
/** The key-use recorder of pool `db` (accounts/key-use.ts). */
export const keyUseFor = (db: Db) => servicesFor(db).keyUse;
