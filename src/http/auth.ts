/** `X-API-Key` authentication and the rate limit (spec: Authentication 1–3), before routing or parsing. */
import { Elysia } from "elysia";
import type { CoreDeps } from "../core-deps.ts";
import { AppError } from "../errors.ts";
import { countRequest, type AuthContext } from "../modules/accounts/service.ts";
import type { KeyUse } from "../modules/accounts/key-use.ts";
import type { RateCounter } from "../modules/accounts/rate-counter.ts";
import type { AuthCache } from "../modules/accounts/auth-cache.ts";
import { hashApiKey, looksLikeApiKey } from "../modules/accounts/keys.ts";
import { decide, RATE_LIMIT_WINDOW_MS, windowStart } from "../modules/accounts/rate-limit.ts";
import { planOf } from "../domain/plans.ts";
import { pathOf } from "./core.ts";
import { syncRequestHook } from "./elysia-quirks.ts";
import { addRequestChecks } from "./validation.ts";

const API_KEY_SECURITY = [{ ApiKeyAuth: [] as string[] }];

type AuthDeps = Pick<CoreDeps, "db" | "clock" | "log"> & {
  services: { keyUse: KeyUse; rateCounter: RateCounter; authCache: AuthCache };
};

/** A key lookup that failed (the database is down …): the gate rethrows it, and the error handler answers. */
class LookupFailed {
  constructor(readonly error: unknown) {}
}

/** What {@link withKeyLookup} found for each `/v1` request with a well-formed key: the account, null for none. */
const LOOKED_UP = Symbol("api key looked up");

/** Requests already authenticated by the gate (one lookup per request, however many hooks ask). */
const AUTHENTICATED = Symbol("authenticated");

/** A request with this module's notes, under module-private symbols (cheaper than a WeakMap per request). */
type Noted = Request & { [LOOKED_UP]?: AuthContext | null | LookupFailed; [AUTHENTICATED]?: AuthContext };

/** The authenticated key and account of `request`, once the gate has authenticated it. */
export const authOf = (request: Request): AuthContext | undefined => (request as Noted)[AUTHENTICATED];

/** True for the paths that need a key (spec: Authentication 1, "every /v1 request"). */
const needsApiKey = (path: string) => path === "/v1" || path.startsWith("/v1/");

const keyOf = (request: Request): string => request.headers.get("x-api-key")?.trim() ?? "";

/** Finds a `/v1` request's account before the app runs; a Promise only when the database must answer. */
function lookUp(deps: AuthDeps, request: Request): Promise<void> | undefined {
  if (!needsApiKey(pathOf(request.url))) return undefined;
  const key = keyOf(request);
  if (!looksLikeApiKey(key)) return undefined;
  const hash = hashApiKey(key);
  const cached = deps.services.authCache.peek(hash) as AuthContext | null | undefined;
  if (cached !== undefined) {
    (request as Noted)[LOOKED_UP] = cached;
    return undefined;
  }
  return deps.services.authCache.authenticate(hash).then(
    (auth) => {
      (request as Noted)[LOOKED_UP] = (auth as AuthContext | undefined) ?? null;
    },
    (error) => {
      (request as Noted)[LOOKED_UP] = new LookupFailed(error);
    },
  );
}

/** Wraps the router's `fetch` so that every `/v1` request's key is looked up before the router's hooks run. */
export function withKeyLookup(fetch: (req: Request) => Response | Promise<Response>, deps: AuthDeps) {
  return (req: Request): Response | Promise<Response> => {
    const pending = lookUp(deps, req);
    return pending === undefined ? fetch(req) : pending.then(() => fetch(req));
  };
}

/**
 * Authenticates a `/v1` request and counts it against the account's per-minute limit, adding `RateLimit-*` to `headers`.
 * @throws AppError INVALID_API_KEY (401) for a missing, malformed, unknown or revoked key
 * @throws AppError RATE_LIMITED (429, with Retry-After) over the plan's per-minute limit
 */
function authenticate(deps: AuthDeps, request: Request, headers: Record<string, unknown>): void {
  const found = (request as Noted)[LOOKED_UP];
  if (found instanceof LookupFailed) throw found.error;
  if (!found) {
    const key = keyOf(request);
    if (found === undefined && looksLikeApiKey(key))
      throw new Error("API key not looked up: wrap the app's fetch with withKeyLookup");
    throw new AppError(
      "INVALID_API_KEY",
      key ? "The API key is invalid or has been revoked." : "Send your API key in the X-API-Key header.",
    );
  }
  const now = deps.clock.now();
  const limit = planOf(found.account.plan).rate_limit_per_minute;
  const decision = decide(
    countRequest(deps.services.rateCounter, found.account.id, windowStart(now, RATE_LIMIT_WINDOW_MS)),
    limit,
    RATE_LIMIT_WINDOW_MS,
    now,
  );
  const remaining = String(decision.remaining);
  const reset = String(decision.resetSeconds);
  headers["ratelimit-limit"] = String(limit);
  headers["ratelimit-remaining"] = remaining;
  headers["ratelimit-reset"] = reset;
  if (!decision.allowed) {
    const rl = {
      "ratelimit-limit": String(limit),
      "ratelimit-remaining": remaining,
      "ratelimit-reset": reset,
      "retry-after": reset,
    };
    throw new AppError(
      "RATE_LIMITED",
      `Rate limit of ${limit} requests per minute exceeded for this account; retry after ${decision.resetSeconds} s.`,
      {},
      rl,
    );
  }
  // Written in batches, off the request's critical path (at most once a minute per key).
  deps.services.keyUse.note(found.keyId, now);
  (request as Noted)[AUTHENTICATED] = found;
}

/** The door: authenticates every `/v1` request before routing. Use once, at the root, after the core plugin. */
export function apiKeyGate(deps: AuthDeps) {
  return new Elysia({ name: "api-key-gate" }).onRequest(
    syncRequestHook(function keyGate({ request, set }) {
      if (needsApiKey(pathOf(request.url))) authenticate(deps, request, set.headers);
    }),
  );
}

/** The request's authentication, which the gate did before routing; a request it did not authenticate is refused. */
function authOrRefuse(request: Request): AuthContext {
  const auth = (request as Noted)[AUTHENTICATED];
  if (!auth) throw new AppError("INVALID_API_KEY", "Send your API key in the X-API-Key header.");
  return auth;
}

/** The `apiKey: true` macro: hands the gate's result to the route (a route the gate did not cover refuses with 401). */
export function authPlugin(_deps: Pick<CoreDeps, "db" | "clock" | "log">) {
  return new Elysia().macro({
    apiKey: {
      detail: { security: API_KEY_SECURITY },
      introspect: (route: unknown) => addRequestChecks(route as Parameters<typeof addRequestChecks>[0]),
      resolve: ({ request }) => ({ auth: authOrRefuse(request) }),
    },
  });
}
