/** Starts the courier simulator as a real server and courier backends pointed at it (sandbox mode). */
import { loadConfig } from "../../src/configure.ts";
import type { Clock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { createCourierBackends, type CourierBackends } from "../../src/modules/couriers/registry.ts";
import { startSimulator, type Simulator } from "../../src/sandbox/server.ts";

export function sandboxBackends(
  clock: Clock,
  env: Record<string, string> = {},
): { sim: Simulator; backends: CourierBackends; close(): Promise<void> } {
  const config = loadConfig({
    COURIER_MODE: "sandbox",
    COURIER_TIMEOUT_MS: "1500",
    COURIER_ASYNC_BUDGET_MS: "4000",
    SANDBOX_ASYNC_SECONDS: "1",
    ...env,
  });
  const sim = startSimulator({
    clock,
    stepSeconds: config.sandboxStepSeconds,
    asyncSeconds: config.sandboxAsyncSeconds,
  });
  const backends = createCourierBackends({ config, clock, log: silentLogger, simulator: sim });
  return { sim, backends, close: async () => (await backends.close(), await sim.stop()) };
}
