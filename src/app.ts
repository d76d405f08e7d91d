/** `buildApp(deps)`: the router and the server around it; no `listen`, no timers, so tests build it freely. */
import { Elysia } from "elysia";
import type { AppDeps } from "./deps.ts";
import { accessLogPlugin, withAccessLog } from "./http/access-log.ts";
import { apiKeyGate } from "./http/auth.ts";
import { corePlugin, pathOf } from "./http/core.ts";
import { requestDeadlineMs } from "./db/client.ts";
import { ApiServer, SocketPeer } from "./http/server.ts";
import { openApiDocument, openapiPlugin } from "./openapi/document.ts";
import { billingModule } from "./modules/billing/index.ts";
import { couriersModule } from "./modules/couriers/index.ts";
import { courierHealthModule } from "./modules/courier-health/index.ts";
import { dashboardModule } from "./modules/dashboard/index.ts";
import { statusPageModule } from "./modules/dashboard/status-page.ts";
import { healthModule } from "./modules/health/index.ts";
import { methodGuard, RouteTable } from "./http/methods.ts";
import { metricsModule } from "./modules/metrics/index.ts";
import { demoModule } from "./modules/demo/index.ts";
import { postmanModule } from "./modules/postman/index.ts";
import { sandboxEchoModule } from "./modules/postman/echo.ts";
import { sandboxAdvanceModule } from "./modules/tracking/sandbox.ts";
import { trackingModule } from "./modules/tracking/index.ts";
import { webhooksModule } from "./modules/webhooks/index.ts";
import { eventsModule } from "./modules/events/index.ts";
import { shipmentsModule } from "./modules/shipments/index.ts";
import { publicPageModule } from "./modules/public-page/index.ts";
import { estimatesModule } from "./modules/estimates/index.ts";
import { actionsModule } from "./modules/actions/index.ts";

export function buildApp(deps: AppDeps): ApiServer {
  const peer = new SocketPeer();
  // Read on the first request, when the app is complete.
  const routes = new RouteTable(() => router.routes);
  // systemRouter off: Bun's native per-route handlers would bypass `fetch`, and with it the access log.
  const router = new Elysia({ systemRouter: false })
    .use(accessLogPlugin())
    .use(corePlugin({ log: deps.log, trustProxy: deps.config.trustProxy }))
    .use(apiKeyGate(deps, (request): Response | Promise<Response> => router.fetch(request)))
    .use(methodGuard(routes))
    .use(openapiPlugin({ publicBaseUrl: deps.config.publicBaseUrl }))
    .use(healthModule(deps))
    .use(metricsModule(deps))
    .use(billingModule(deps))
    .use(couriersModule({ ...deps, healthOf: (slug) => deps.services.courierHealth.summary(slug) }))
    .use(courierHealthModule(deps))
    .use(trackingModule(deps))
    .use(demoModule(deps, peer.addressOf))
    .use(postmanModule(deps, (self) => openApiDocument(self, { publicBaseUrl: deps.config.publicBaseUrl })))
    .use(sandboxEchoModule(deps))
    .use(sandboxAdvanceModule(deps))
    .use(webhooksModule(deps))
    .use(shipmentsModule(deps))
    .use(estimatesModule(deps))
    .use(actionsModule(deps))
    .use(eventsModule(deps))
    .use(publicPageModule(deps, peer.addressOf))
    .use(dashboardModule(deps, { socketAddressOf: peer.addressOf }))
    .use(statusPageModule(deps))
    .compile();
  // Every request passes the access log, which opens its scope: id, deadline, trace span (http/access-log.ts).
  const routeOf = (request: Request) => routes.templateOf(request.method, pathOf(request.url));
  const fetch = withAccessLog(router.fetch, {
    log: deps.log,
    routeOf,
    deadlineMs: requestDeadlineMs(deps.config.dbDeadlineSeconds),
  });
  return new ApiServer(router, fetch, peer);
}
