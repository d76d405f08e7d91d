/**
 * One JSON access-log line per request on the public port, and the HTTP
 * duration histogram (modules/metrics/registry.ts):
 * `{"msg":"request","method","route","status","duration_ms","request_id","account_id"}`.
 *
 * `route` is the route template (`/v1/webhooks/:id`), never the raw path or
 * query, which may carry tracking numbers; nothing from headers or bodies is
 * logged, so no key or secret can reach the log. Probe and metrics requests
 * are logged at `debug` (orchestrators call them every few seconds).
 *
 * How: global hooks note each request's route template and authenticated
 * account; {@link withAccessLog} wraps the router's `fetch` (app.ts) so that EVERY
 * response is seen with its real status — including those answered before
 * routing (HTTPS_REQUIRED, an oversized Content-Length, the key gate's 401) and those rendered
 * by the error handler, which Elysia's after-response hook does not report
 * reliably.
 */
import { Elysia } from "elysia";
import { runInRequestScope, type Logger, type RequestScope } from "../lib/log.ts";
import { authOf } from "./auth.ts";
import { requestIdFor } from "./core.ts";
import { observeHttp } from "../modules/metrics/registry.ts";

/** The route template each request matched, noted on the request under a module-private symbol (see auth.ts). */
const ROUTE = Symbol("route");
type Noted = Request & { [ROUTE]?: string };
const QUIET = new Set(["/healthz", "/readyz", "/metrics"]);

function note(request: Request, route: string | undefined): void {
  if (route) (request as Noted)[ROUTE] = route;
}

/**
 * Global hooks that note the route template and account of each request (they never answer).
 * They name the two context fields they read: Elysia compiles each route from what its hooks use, and a hook
 * that takes the whole context makes every route parse cookies, copy all headers and parse the query.
 */
export function accessLogPlugin() {
  return new Elysia({ name: "access-log" })
    .onAfterHandle({ as: "global" }, ({ request, route }) => void note(request, route))
    .onError({ as: "global" }, ({ request, route }) => void note(request, route));
}

/**
 * The route template an answered request is labelled with: the one it matched; for a 401 or 429 refused before
 * routing, the one `routeOf` says it would have matched; else `unmatched` (bounded label values).
 */
export function answeredRoute(req: Request, status: number, routeOf: (req: Request) => string | undefined = () => undefined): string {
  return (req as Noted)[ROUTE] ?? ((status === 401 || status === 429 ? routeOf(req) : undefined) ?? "unmatched");
}

/**
 * Wraps a fetch handler (the app's `fetch`): chooses the request id, runs the request in its log scope (every
 * line it causes carries `request_id`, lib/log.ts), times it, then writes the access line and observes the
 * histogram. A request the key gate refused before routing (401, 429) is labelled with the route template
 * `routeOf` says it would have matched; any other that matched no route is `unmatched` (bounded label values). Access lines go
 * through `log.access()`: fixed, secret-free fields, so no redaction pass.
 */
export function withAccessLog(fetch: (req: Request) => Response | Promise<Response>, log: Logger, routeOf: (req: Request) => string | undefined = () => undefined) {
  const accessLog = log.access();
  const logged = (req: Request, res: Response, started: number, scope: RequestScope): Response => {
    scope.open = false;
    const ms = performance.now() - started;
    const route = answeredRoute(req, res.status, routeOf);
    observeHttp(route, req.method, res.status, ms / 1000);
    const level = QUIET.has(route) ? "debug" : "info";
    // The line is built only when it will be written (`LOG_LEVEL=warn` serves without one). The id is the one
    // the core hook put on the answer (`requestIdFor` chooses once per request): reading `res.headers` would make
    // Bun build a Headers object for a Response that would otherwise go out without one.
    // The key gate remembers each authenticated request, so 4xx answers after authentication (422, 404) carry
    // the account too; dashboard pages carry no account here.
    if (accessLog.enabled(level))
      accessLog[level]("request", { method: req.method, route, status: res.status, duration_ms: Math.round(ms * 10) / 10, request_id: scope.id, account_id: authOf(req)?.account.id });
    return res;
  };
  // An answer the app gave synchronously is logged and returned as is: no promise per request.
  return (req: Request): Response | Promise<Response> => {
    const started = performance.now();
    const scope: RequestScope = { id: requestIdFor(req), open: true };
    const res = runInRequestScope(scope, fetch, req);
    return res instanceof Promise ? res.then((r) => logged(req, r, started, scope)) : logged(req, res, started, scope);
  };
}
