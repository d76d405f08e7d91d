/**
 * `X-API-Key` authentication and the per-minute rate limit (spec:
 * Authentication 1–3).
 *
 * Order of work: every `/v1` request is authenticated at the door, in an
 * `onRequest` hook ({@link apiKeyGate}) that runs before routing, before the
 * body is read and before the query, path or body is validated. An
 * unauthenticated request costs one hash and one lookup, never a parse; a
 * missing or bad key is 401 whatever else is wrong with the request (rule 3
 * has no exceptions), and an account over its limit gets 429, never a 422.
 *
 * Per request: a shape check, then the key's account (from the in-process
 * cache, or ONE statement on a miss) and a count in the account's minute
 * window (in process).
 *
 * The lookup that may wait for the database runs before Elysia sees the
 * request ({@link withKeyLookup} wraps the app's `fetch`; app.ts applies it),
 * so that the gate itself is synchronous: Elysia reads an async `onRequest`
 * hook as a reason to make every request's path async.
 *
 * Elysia decides whether to `await` a hook by reading its source text
 * (`isAsync` in elysia's compose): the words "async" or "await", or any
 * `return f(` / `=> f(`, count as asynchronous. One such `onRequest` hook makes
 * every request's entry point async; one such hook on a route makes its
 * handler async — a promise and a microtask per hook, on every request. The
 * hooks below are written so that Elysia reads them as synchronous, and they
 * name the context fields they read (a hook that takes the whole context makes
 * Elysia parse the query, cookies and headers of every request). `RateLimit-*` headers go
 * on every authenticated response, errors (422 …) included; over the limit:
 * 429 RATE_LIMITED with Retry-After.
 *
 * The `apiKey: true` macro hands the result to the route as `auth`, puts
 * `security` on the route's OpenAPI operation (security in `guard({detail})`
 * is ignored), and checks the route's path parameters, query, Idempotency-Key and JSON body with our
 * own validator, every problem at once (see `validation.ts`, `addRequestChecks`).
 */
import { Elysia } from "elysia";
import type { CoreDeps } from "../core-deps.ts";
import { AppError } from "../errors.ts";
import { countRequest, findApiKey, type AuthContext } from "../modules/accounts/service.ts";
import { keyUseFor } from "../modules/accounts/key-use.ts";
import { peekCached } from "../modules/accounts/auth-cache.ts";
import { hashApiKey, looksLikeApiKey } from "../modules/accounts/keys.ts";
import { decide, RATE_LIMIT_WINDOW_MS, windowStart } from "../modules/accounts/rate-limit.ts";
import { planOf } from "../domain/plans.ts";
import { pathOf } from "./core.ts";
import { addRequestChecks } from "./validation.ts";

export const API_KEY_SECURITY = [{ ApiKeyAuth: [] as string[] }];

type AuthDeps = Pick<CoreDeps, "db" | "clock" | "log">;

/** A key lookup that failed (the database is down …): the gate rethrows it, and the error handler answers. */
class LookupFailed {
  constructor(readonly error: unknown) {}
}

/** What {@link withKeyLookup} found for each `/v1` request with a well-formed key: the account, null for none. */
const LOOKED_UP = Symbol("api key looked up");

/** Requests already authenticated by the gate (one lookup per request, however many hooks ask). */
const AUTHENTICATED = Symbol("authenticated");

/**
 * A request with this module's notes. They live on the Request object under module-private symbols: a
 * property is read and written by the JIT in a few instructions where a WeakMap costs a runtime call, and a
 * note dies with its request (every `/v1` request takes two of each).
 */
type Noted = Request & { [LOOKED_UP]?: AuthContext | null | LookupFailed; [AUTHENTICATED]?: AuthContext };

/** The authenticated key and account of `request`, once the gate has authenticated it. */
export const authOf = (request: Request): AuthContext | undefined => (request as Noted)[AUTHENTICATED];

/** True for the paths that need a key (spec: Authentication 1, "every /v1 request"). */
export const needsApiKey = (path: string) => path === "/v1" || path.startsWith("/v1/");

const keyOf = (request: Request): string => request.headers.get("x-api-key")?.trim() ?? "";

/**
 * Finds the account of a `/v1` request's key before the request enters the
 * app: at once when the auth cache answers, else after one lookup. The
 * result waits for the gate ({@link apiKeyGate}), which decides; nothing is
 * refused here.
 * @returns a Promise only when a lookup must wait for the database.
 */
function lookUp(deps: AuthDeps, request: Request): Promise<void> | undefined {
  if (!needsApiKey(pathOf(request.url))) return undefined;
  const key = keyOf(request);
  if (!looksLikeApiKey(key)) return undefined;
  const hash = hashApiKey(key);
  const cached = peekCached(deps.db, hash);
  if (cached !== undefined) {
    (request as Noted)[LOOKED_UP] = cached;
    return undefined;
  }
  return findApiKey(deps.db, hash).then(
    (auth) => void ((request as Noted)[LOOKED_UP] = auth ?? null),
    (error) => void ((request as Noted)[LOOKED_UP] = new LookupFailed(error)),
  );
}

/**
 * Wraps the app's `fetch` so that every `/v1` request's key is looked up
 * before Elysia runs its hooks (see the module comment). Apply it wherever
 * the app's `fetch` is set (app.ts does, after every compile).
 */
export function withKeyLookup(fetch: (req: Request) => Response | Promise<Response>, deps: AuthDeps) {
  return (req: Request): Response | Promise<Response> => {
    const pending = lookUp(deps, req);
    return pending === undefined ? fetch(req) : pending.then(() => fetch(req));
  };
}

/**
 * Authenticates a `/v1` request (its key looked up by {@link withKeyLookup})
 * and counts it against the account's per-minute limit; `RateLimit-*`
 * headers are added to `headers` (the response's).
 * @throws AppError INVALID_API_KEY (401) for a missing, malformed, unknown or revoked key
 * @throws AppError RATE_LIMITED (429, with Retry-After) over the plan's per-minute limit
 * @throws the lookup's own error (database unavailable …), or Error when the app's fetch was not wrapped
 */
function authenticate(deps: AuthDeps, request: Request, headers: Record<string, unknown>): void {
  const found = (request as Noted)[LOOKED_UP];
  if (found instanceof LookupFailed) throw found.error;
  if (!found) {
    const key = keyOf(request);
    if (found === undefined && looksLikeApiKey(key)) throw new Error("API key not looked up: wrap the app's fetch with withKeyLookup");
    throw new AppError("INVALID_API_KEY", key ? "The API key is invalid or has been revoked." : "Send your API key in the X-API-Key header.");
  }
  const now = deps.clock.now();
  const limit = planOf(found.account.plan).rate_limit_per_minute;
  const decision = decide(countRequest(deps.db, found.account.id, windowStart(now, RATE_LIMIT_WINDOW_MS)), limit, RATE_LIMIT_WINDOW_MS, now);
  const remaining = String(decision.remaining);
  const reset = String(decision.resetSeconds);
  headers["ratelimit-limit"] = String(limit);
  headers["ratelimit-remaining"] = remaining;
  headers["ratelimit-reset"] = reset;
  if (!decision.allowed) {
    const rl = { "ratelimit-limit": String(limit), "ratelimit-remaining": remaining, "ratelimit-reset": reset, "retry-after": reset };
    throw new AppError("RATE_LIMITED", `Rate limit of ${limit} requests per minute exceeded for this account; retry after ${decision.resetSeconds} s.`, {}, rl);
  }
  // Written in batches, off the request's critical path (at most once a minute per key).
  keyUseFor(deps.db).note(found.keyId, now);
  (request as Noted)[AUTHENTICATED] = found;
}

/**
 * The door: authenticates every `/v1` request before routing, parsing or
 * validation. Use once, at the root, right after the core plugin; the app's
 * `fetch` must be wrapped with {@link withKeyLookup}.
 */
export function apiKeyGate(deps: AuthDeps) {
  return new Elysia({ name: "api-key-gate" }).onRequest(function keyGate({ request, set }) {
    if (needsApiKey(pathOf(request.url))) authenticate(deps, request, set.headers);
  });
}

/** The request's authentication, which the gate did before routing; a request it did not authenticate is refused. */
function authOrRefuse(request: Request): AuthContext {
  const auth = (request as Noted)[AUTHENTICATED];
  if (!auth) throw new AppError("INVALID_API_KEY", "Send your API key in the X-API-Key header.");
  return auth;
}

/**
 * The `apiKey: true` macro for the modules' routes, which all live under
 * `/v1`: the gate has authenticated the request before routing, and the
 * macro hands the result to the route (a route the gate did not cover would
 * refuse every request with 401).
 */
export function authPlugin(_deps: AuthDeps) {
  return new Elysia().macro({
    apiKey: {
      detail: { security: API_KEY_SECURITY },
      introspect: (route: unknown) => addRequestChecks(route as Parameters<typeof addRequestChecks>[0]),
      resolve({ request }) {
        const resolved = { auth: authOrRefuse(request) };
        return resolved;
      },
    },
  });
}
