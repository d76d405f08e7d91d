/** One JSON access line per request and the HTTP histogram (docs/logging.md#request-ids). */
import { Elysia } from "elysia";
import { runInRequestScope, type Logger, type RequestScope } from "../lib/log.ts";
import { authOf } from "./auth.ts";
import { requestIdFor } from "./core.ts";
import { observeHttp } from "../modules/metrics/registry.ts";
import { currentTraceId } from "../lib/tracing.ts";

/** The route template each request matched, noted on the request under a module-private symbol (see auth.ts). */
const ROUTE = Symbol("route");
type Noted = Request & { [ROUTE]?: string };
const QUIET = new Set(["/healthz", "/readyz", "/metrics"]);

function note(request: Request, route: string | undefined): void {
  if (route) (request as Noted)[ROUTE] = route;
}

/** Global hooks that note each request's route template and account; they name only the context fields they read. */
export function accessLogPlugin() {
  return new Elysia({ name: "access-log" })
    .onAfterHandle({ as: "global" }, ({ request, route }) => void note(request, route))
    .onError({ as: "global" }, ({ request, route }) => void note(request, route));
}

/** Route label of an answered request: its template; for a 401/429 refused before routing, the one `routeOf` gives; else `unmatched`. */
export function answeredRoute(
  req: Request,
  status: number,
  routeOf: (req: Request) => string | undefined = () => undefined,
): string {
  return (req as Noted)[ROUTE] ?? (status === 401 || status === 429 ? routeOf(req) : undefined) ?? "unmatched";
}

/** Wraps the app's `fetch`: request id, log scope, then the access line and the histogram. */
export function withAccessLog(
  fetch: (req: Request) => Response | Promise<Response>,
  log: Logger,
  routeOf: (req: Request) => string | undefined = () => undefined,
) {
  const accessLog = log.access();
  const logged = (req: Request, res: Response, started: number, scope: RequestScope): Response => {
    scope.open = false;
    const ms = performance.now() - started;
    const route = answeredRoute(req, res.status, routeOf);
    observeHttp(route, req.method, res.status, ms / 1000);
    const level = QUIET.has(route) ? "debug" : "info";
    // Built only when written; the id comes from `requestIdFor` (reading `res.headers` would make Bun build a Headers).
    if (accessLog.enabled(level))
      accessLog[level]("request", {
        method: req.method,
        route,
        status: res.status,
        duration_ms: Math.round(ms * 10) / 10,
        request_id: scope.id,
        account_id: authOf(req)?.account.id,
        trace_id: currentTraceId(),
      });
    return res;
  };
  return (req: Request): Response | Promise<Response> => {
    const started = performance.now();
    const scope: RequestScope = { id: requestIdFor(req), open: true };
    const res = runInRequestScope(scope, fetch, req);
    return res instanceof Promise ? res.then((r) => logged(req, r, started, scope)) : logged(req, res, started, scope);
  };
}
