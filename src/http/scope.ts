/**
 * What one HTTP request carries from hook to hook: the access log's request scope (`runInRequestScope`,
 * src/lib/log.ts) with the edge's notes. Why here and not on the Request: docs/performance.md#decisions.
 */
import { currentRequestScope, type RequestScope } from "../lib/log.ts";
import type { ValidationItem } from "../lib/errors.ts";
import type { AuthContext } from "../modules/accounts/service.ts";

/** A key lookup that failed (the database is down …): the gate rethrows it, and the error handler answers. */
export class LookupFailed {
  constructor(readonly error: unknown) {}
}

/** One request's notes; every field is written by one hook and read by later ones (or by the access log). */
export interface HttpScope extends RequestScope {
  /** The route template the request matched (the access-log hooks), for the access line and the span. */
  route: string | undefined;
  /** What the key gate's wait found for the key (null: no such live key), read when the request is dispatched again. */
  lookedUp: AuthContext | null | LookupFailed | undefined;
  /** The key and account the gate authenticated; the `apiKey` macro hands it to the route. */
  auth: AuthContext | undefined;
  /** 422 items the path and query checks found, reported with the body's by the route's last check. */
  found: ValidationItem[] | undefined;
  /** 422 items a route's own body rules found (e.g. the webhook URL rules). */
  ruled: ValidationItem[] | undefined;
}

/** A new scope for a request whose id is `id`: every field present, so each scope has the same shape. */
export function newHttpScope(id: string): HttpScope {
  return { id, open: true, route: undefined, lookedUp: undefined, auth: undefined, found: undefined, ruled: undefined };
}

/** The running request's scope; undefined outside the access log's `fetch` (a bare Elysia app in a test). */
export const httpScope = (): HttpScope | undefined => currentRequestScope() as HttpScope | undefined;
