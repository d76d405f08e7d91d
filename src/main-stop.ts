/**
 * Shutdown of what main.ts started, in reverse: listener drained, scheduler, courier backends, simulator, internal
 * port, services, traces, then the pool and the embedded PostgreSQL (docs/deployment.md#start-up-and-shutdown).
 */
import type { Database } from "./db/client.ts";
import type { Logger } from "./lib/log.ts";
import { settleWithin } from "./lib/settle.ts";
import { stopTracing } from "./lib/tracing.ts";
import type { CourierBackends } from "./modules/couriers/registry.ts";
import type { AdminServer } from "./modules/health/admin-server.ts";
import type { Simulator } from "./sandbox/server.ts";
import type { Scheduler } from "./scheduler/index.ts";
import { stopServices, type Services } from "./services.ts";

/** What main.ts has started so far (a failed start stops only these). */
export interface Running {
  database?: Database;
  sim?: Simulator;
  backends?: CourierBackends;
  admin?: AdminServer;
  scheduler?: Scheduler;
  services?: Services;
  server?: { stop(closeActive?: boolean): Promise<void> };
}

/** Stops everything in `running` in the order above; never throws. */
export async function stopAll(running: Running, log: Logger, graceMs: number): Promise<void> {
  const deadline = Date.now() + graceMs;
  const step = async (name: string, fn: () => Promise<unknown> | undefined) => {
    try {
      await fn();
    } catch (err) {
      log.error("error during shutdown", { step: name, error: err as Error });
    }
  };
  await step("listener", async () => {
    const server = running.server;
    if (!server) return;
    if (!(await settleWithin(server.stop(false), deadline - Date.now()))) {
      log.warn("grace period over; closing the remaining connections");
      await server.stop(true);
    }
  });
  const left = () => Math.max(1_000, deadline - Date.now());
  await step("scheduler", () => running.scheduler?.stop({ timeout: left() }));
  await step("courier backends", () => running.backends?.close());
  await step("simulator", () => running.sim?.stop());
  await step("internal port", () => running.admin?.stop());
  // After the last request and job, before the pool closes: quota units go back, pending counts are written.
  await step("services", () =>
    running.services
      ? stopServices(running.services, (name, error) =>
          log.error("error during shutdown", { step: name, error: error as Error }),
        )
      : undefined,
  );
  // Bounded: a collector may hang.
  await step("traces", () => settleWithin(stopTracing(), Math.min(5_000, left())));
  // Last: the pool, then the embedded PostgreSQL (its own exit hook is off, db/client.ts).
  await step("database", () => running.database?.close());
}
