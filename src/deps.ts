/**
 * `AppDeps`: everything the HTTP app and the scheduler are built from, assembled by `main.ts` (or a test helper)
 * and passed to `buildApp` (src/app.ts). Its own file, so that no module imports the composition root.
 *
 * Modules that other modules build on take the narrower {@link CoreDeps} (src/core-deps.ts) plus what they need
 * by name, so this file's references to the couriers and health modules never close a loop.
 */
import type { CoreDeps, EventSink } from "./core-deps.ts";
import type { CourierBackends } from "./modules/couriers/registry.ts";
import type { Lifecycle } from "./modules/health/state.ts";
import type { Services } from "./services.ts";

export interface AppDeps extends CoreDeps {
  /** Courier backends (live, or pointed at the simulator in sandbox mode). */
  backends: CourierBackends;
  /**
   * Receives every event the tracking module writes, inside the transaction that writes it: the webhooks
   * module's outbox fan-out (`outboxEventSink`), wired by main.ts (and the test helper).
   */
  onEvents: EventSink;
  /** The process's caches, leases, counters and batchers (src/services.ts), built by the composition root. */
  services: Services;
  /** Draining flag read by `/readyz` (main.ts sets it on SIGTERM); default: never draining. */
  lifecycle?: Lifecycle;
}
