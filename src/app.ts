/**
 * `buildApp(deps)`: composes the plugins and feature modules into one Elysia
 * app. No `listen`, no timers (STYLE): tests build it freely and drive it with
 * `app.handle(new Request(...))` or a real server.
 */
import { Elysia } from "elysia";
import type { Config } from "./config.ts";
import type { Db } from "./db/client.ts";
import type { Clock } from "./lib/clock.ts";
import type { Logger } from "./lib/log.ts";
import { corePlugin } from "./http/core.ts";
import { openapiPlugin } from "./http/openapi.ts";
import { billingModule } from "./modules/billing/index.ts";
import { couriersModule } from "./modules/couriers/index.ts";
import { dashboardModule } from "./modules/dashboard/index.ts";
import { healthModule } from "./modules/health/index.ts";
import { metricsModule } from "./modules/metrics/index.ts";
import type { CourierBackends } from "./modules/couriers/registry.ts";
import { demoModule } from "./modules/demo/index.ts";
import { postmanModule } from "./modules/postman/index.ts";
import { trackingModule } from "./modules/tracking/index.ts";
import { webhooksModule } from "./modules/webhooks/index.ts";

/** Everything the HTTP layer needs; built by `main.ts` (or a test helper). */
export interface AppDeps {
  config: Config;
  db: Db;
  clock: Clock;
  log: Logger;
  /** 32-byte key that encrypts webhook signing secrets at rest (AES-256-GCM; CONTRACT 7, SECRETS_KEY). */
  secretsKey: Uint8Array;
  /** Courier backends (live, or pointed at the simulator in sandbox mode). */
  backends: CourierBackends;
}

export function buildApp(deps: AppDeps) {
  return new Elysia()
    .use(corePlugin({ log: deps.log, trustProxy: deps.config.trustProxy }))
    .use(openapiPlugin({ publicBaseUrl: deps.config.publicBaseUrl }))
    .use(healthModule(deps))
    .use(metricsModule(deps))
    .use(billingModule())
    .use(couriersModule(deps))
    .use(trackingModule(deps))
    .use(demoModule(deps))
    .use(postmanModule(deps))
    .use(webhooksModule(deps))
    .use(dashboardModule(deps));
}

export type App = ReturnType<typeof buildApp>;
