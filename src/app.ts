/**
 * `buildApp(deps)`: composes the plugins and feature modules into one Elysia
 * app. No `listen`, no timers (those belong to main.ts and the scheduler): tests build it freely and drive it with
 * `app.handle(new Request(...))` or a real server.
 */
import { Elysia } from "elysia";
import type { AppDeps } from "./deps.ts";
import { accessLogPlugin, withAccessLog } from "./http/access-log.ts";
import { apiKeyGate, withKeyLookup } from "./http/auth.ts";
import { corePlugin } from "./http/core.ts";
import { openApiDocument, openapiPlugin } from "./openapi/document.ts";
import { billingModule } from "./modules/billing/index.ts";
import { couriersModule } from "./modules/couriers/index.ts";
import { dashboardModule } from "./modules/dashboard/index.ts";
import { healthModule } from "./modules/health/index.ts";
import { methodGuard } from "./http/methods.ts";
import { metricsModule } from "./modules/metrics/index.ts";
import { demoModule } from "./modules/demo/index.ts";
import { postmanModule } from "./modules/postman/index.ts";
import { sandboxEchoModule } from "./modules/postman/echo.ts";
import { sandboxAdvanceModule } from "./modules/tracking/sandbox.ts";
import { trackingModule } from "./modules/tracking/index.ts";
import { webhooksModule } from "./modules/webhooks/index.ts";
import { eventsModule } from "./modules/events/index.ts";
import { shipmentsModule } from "./modules/shipments/index.ts";

export function buildApp(deps: AppDeps) {
  // The method guard reads the finished app's routes on the first request.
  const routesOf: { app?: { routes: readonly { method: string; path: string }[] } } = {};
  // systemRouter off: Bun's native per-route handlers would bypass `fetch`, and with it the access log.
  const app = new Elysia({ systemRouter: false })
    .use(accessLogPlugin())
    .use(corePlugin({ log: deps.log, trustProxy: deps.config.trustProxy }))
    .use(apiKeyGate(deps))
    .use(methodGuard(() => routesOf.app?.routes ?? []))
    .use(openapiPlugin({ publicBaseUrl: deps.config.publicBaseUrl }))
    .use(healthModule(deps))
    .use(metricsModule(deps))
    .use(billingModule(deps))
    .use(couriersModule(deps))
    .use(trackingModule(deps))
    .use(demoModule(deps))
    .use(postmanModule(deps, (self) => openApiDocument(self, { publicBaseUrl: deps.config.publicBaseUrl })))
    .use(sandboxEchoModule(deps))
    .use(sandboxAdvanceModule(deps))
    .use(webhooksModule(deps))
    .use(shipmentsModule(deps))
    .use(eventsModule(deps))
    .use(dashboardModule(deps));
  routesOf.app = app;
  wrapFetch(app, deps);
  return app;
}

/**
 * Every response passes the access log, whatever answered it (http/access-log.ts), and every `/v1` request's
 * API key is looked up before Elysia's hooks run (http/auth.ts, `withKeyLookup`). `handle()` and `listen()` both go through `app.fetch`, a writable property
 * that `compile()` (called by `listen()`) sets anew: the wrapper is applied
 * now and again after every compile.
 */
function wrapFetch(app: Elysia<any, any, any, any, any, any, any>, deps: AppDeps): void {
  const wrap = () => Object.defineProperty(app, "fetch", { value: withAccessLog(withKeyLookup(app.fetch, deps), deps.log), configurable: true, writable: true });
  const compile = app.compile.bind(app);
  Object.defineProperty(app, "compile", {
    value: () => {
      compile();
      wrap();
      return app;
    },
    configurable: true,
    writable: true,
  });
  wrap();
}

export type App = ReturnType<typeof buildApp>;
