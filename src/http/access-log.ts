/**
 * The server's one `fetch` wrapper: each request's scope (id, deadline, trace span), then one JSON access line and
 * the HTTP histogram (docs/logging.md#request-ids; docs/architecture.md#the-server).
 */
import { Elysia } from "elysia";
import { Deadline, withDeadline } from "../lib/deadline.ts";
import { runInRequestScope, type Logger } from "../lib/log.ts";
import { startRequestSpan, type RequestSpan } from "../lib/tracing.ts";
import { observeHttp } from "../modules/metrics/registry.ts";
import { newRequestId } from "./core.ts";
import { httpScope, newHttpScope, type HttpScope } from "./scope.ts";
import type { Fetch } from "./server.ts";

const QUIET = new Set(["/healthz", "/readyz", "/metrics"]);

function note(route: string | undefined): void {
  const scope = httpScope();
  if (route && scope) scope.route = route;
}

/** Global hooks that note each request's route template in its scope; they name only the context fields they read. */
export function accessLogPlugin() {
  return new Elysia({ name: "access-log" })
    .onAfterHandle({ as: "global" }, ({ route }) => void note(route))
    .onError({ as: "global" }, ({ route }) => void note(route));
}

export interface AccessLogOptions {
  log: Logger;
  /** The route template a request would match; names a 401/429 refused before routing. */
  routeOf: (req: Request) => string | undefined;
  /** Each request's budget for its database waits together, ms (docs/deployment.md, "When the database does not answer"). */
  deadlineMs: number;
}

/** Route label of an answered request: its template; for a 401/429 refused before routing, the one `routeOf` gives; else `unmatched`. */
function answeredRoute(scope: HttpScope, req: Request, status: number, routeOf: AccessLogOptions["routeOf"]): string {
  return scope.route ?? (status === 401 || status === 429 ? routeOf(req) : undefined) ?? "unmatched";
}

/**
 * Wraps the app's `fetch`: each request runs in its own scope ({@link HttpScope}: its id and the hooks' notes), under
 * one {@link Deadline} of `deadlineMs` (closed once the answer is produced: a streamed body's later reads have none)
 * and, with traces on, in a SERVER span; then the access line and the histogram.
 */
export function withAccessLog(fetch: Fetch, opts: AccessLogOptions): Fetch {
  const { routeOf, deadlineMs } = opts;
  const accessLog = opts.log.access();
  const logged = (req: Request, res: Response, started: number, scope: HttpScope, span: RequestSpan | undefined) => {
    scope.open = false;
    const ms = performance.now() - started;
    const route = answeredRoute(scope, req, res.status, routeOf);
    observeHttp(route, req.method, res.status, ms / 1000);
    span?.answered(route, res.status);
    const level = QUIET.has(route) ? "debug" : "info";
    // Built only when written (reading `res.headers` would make Bun build a Headers).
    if (accessLog.enabled(level))
      accessLog[level]("request", {
        method: req.method,
        route,
        status: res.status,
        duration_ms: Math.round(ms * 10) / 10,
        request_id: scope.id,
        account_id: scope.auth?.account.id,
        trace_id: span?.traceId,
      });
    return res;
  };
  return (req) => {
    const started = performance.now();
    const scope = newHttpScope(newRequestId(req));
    const deadline = new Deadline(deadlineMs);
    const span = startRequestSpan(req);
    const threw = (err: unknown): never => {
      deadline.close();
      span?.threw(err);
      throw err;
    };
    let res: Response | Promise<Response>;
    try {
      res = withDeadline(deadline, () =>
        span ? span.run((r) => runInRequestScope(scope, fetch, r), req) : runInRequestScope(scope, fetch, req),
      );
    } catch (err) {
      return threw(err);
    }
    if (!(res instanceof Promise)) {
      deadline.close();
      return logged(req, res, started, scope, span);
    }
    return res.then((r) => {
      deadline.close();
      return logged(req, r, started, scope, span);
    }, threw);
  };
}
