/** `AppDeps`: what the app and scheduler are built from; its own file, so no module imports the composition root. */
import type { CoreDeps, EventSink } from "./core-deps.ts";
import type { CourierBackends } from "./modules/couriers/registry.ts";
import type { Lifecycle } from "./modules/health/state.ts";
import type { Services } from "./services.ts";

export interface AppDeps extends CoreDeps {
  /** Courier backends (live, or pointed at the simulator in sandbox mode). */
  backends: CourierBackends;
  /** The webhooks outbox fan-out, called inside the transaction that writes tracking events. */
  onEvents: EventSink;
  /** The process's caches, leases, counters and batchers (src/services.ts), built by the composition root. */
  services: Services;
  /** Draining flag read by `/readyz` (main.ts sets it on SIGTERM); default: never draining. */
  lifecycle?: Lifecycle;
}
