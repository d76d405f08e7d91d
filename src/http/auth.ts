/** `X-API-Key` authentication and the rate limit (spec: Authentication 1–3), before routing or parsing. */
import { Elysia } from "elysia";
import type { CoreDeps } from "../core-deps.ts";
import { AppError } from "../lib/errors.ts";
import { countRequest, type AuthContext } from "../modules/accounts/service.ts";
import type { KeyUse } from "../modules/accounts/key-use.ts";
import type { RateCounter } from "../modules/accounts/rate-counter.ts";
import type { AuthCache } from "../modules/accounts/auth-cache.ts";
import { hashApiKey, looksLikeApiKey } from "../modules/accounts/keys.ts";
import { decide, RATE_LIMIT_WINDOW_MS, windowStart } from "../modules/accounts/rate-limit.ts";
import { planOf } from "../domain/plans.ts";
import { pathOf } from "./core.ts";
import { requestHookThatMayWait } from "./elysia-quirks.ts";
import { httpScope, LookupFailed, type HttpScope } from "./scope.ts";
import { addRequestChecks } from "./validation.ts";

const API_KEY_SECURITY = [{ ApiKeyAuth: [] as string[] }];

type AuthDeps = Pick<CoreDeps, "db" | "clock" | "log"> & {
  services: { keyUse: KeyUse; rateCounter: RateCounter; authCache: AuthCache };
};

/** True for the paths that need a key (spec: Authentication 1, "every /v1 request"). */
const needsApiKey = (path: string) => path === "/v1" || path.startsWith("/v1/");

const keyOf = (request: Request): string => request.headers.get("x-api-key")?.trim() ?? "";

/** Looks a key up in the database (on a cache miss); what it finds is noted in `scope` for the request's next pass. */
function lookUp(deps: AuthDeps, hash: string, scope: HttpScope): Promise<void> {
  return deps.services.authCache.authenticate(hash).then(
    (auth) => {
      scope.lookedUp = (auth as AuthContext | undefined) ?? null;
    },
    (error) => {
      scope.lookedUp = new LookupFailed(error);
    },
  );
}

/**
 * The gate's decision for a `/v1` request: authenticated (undefined) or refused (thrown), at once when the key is in
 * the auth cache or was looked up on the request's first pass; otherwise the lookup to wait for.
 * @throws see {@link authenticate}; the lookup's own error (the database is down …) after the wait
 */
function gate(deps: AuthDeps, request: Request, headers: Record<string, unknown>): Promise<void> | undefined {
  const scope = httpScope();
  if (!scope) throw new Error("The key gate runs inside the access log's request scope (withAccessLog).");
  const key = keyOf(request);
  let found = scope.lookedUp;
  if (found === undefined && looksLikeApiKey(key)) {
    const hash = hashApiKey(key);
    found = deps.services.authCache.peek(hash) as AuthContext | null | undefined;
    if (found === undefined) return lookUp(deps, hash, scope);
  }
  if (found instanceof LookupFailed) throw found.error;
  authenticate(deps, scope, key, found ?? undefined, headers);
  return undefined;
}

/**
 * Authenticates a `/v1` request and counts it against the account's per-minute limit, adding `RateLimit-*` to `headers`.
 * @throws AppError INVALID_API_KEY (401) for a missing, malformed, unknown or revoked key
 * @throws AppError RATE_LIMITED (429, with Retry-After) over the plan's per-minute limit
 */
function authenticate(
  deps: AuthDeps,
  scope: HttpScope,
  key: string,
  found: AuthContext | undefined,
  headers: Record<string, unknown>,
): void {
  if (!found)
    throw new AppError(
      "INVALID_API_KEY",
      key ? "The API key is invalid or has been revoked." : "Send your API key in the X-API-Key header.",
    );
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
  scope.auth = found;
}

/**
 * The door: authenticates every `/v1` request before routing (so before its body is read). Use once, at the root,
 * after the core plugin; `again` is the root app's `fetch`, which a request whose key had to be looked up in the
 * database passes through once more (src/http/elysia-quirks.ts).
 */
export function apiKeyGate(deps: AuthDeps, again: (request: Request) => Response | Promise<Response>) {
  return new Elysia({ name: "api-key-gate" }).onRequest(
    requestHookThatMayWait(
      (request, set) => (needsApiKey(pathOf(request.url)) ? gate(deps, request, set.headers) : undefined),
      again,
    ),
  );
}

/** The request's authentication, which the gate did before routing; a request it did not authenticate is refused. */
function authOrRefuse(): AuthContext {
  const auth = httpScope()?.auth;
  if (!auth) throw new AppError("INVALID_API_KEY", "Send your API key in the X-API-Key header.");
  return auth;
}

/** The `apiKey: true` macro: hands the gate's result to the route (a route the gate did not cover refuses with 401). */
export function authPlugin(_deps: Pick<CoreDeps, "db" | "clock" | "log">) {
  return new Elysia().macro({
    apiKey: {
      detail: { security: API_KEY_SECURITY },
      introspect: (route: unknown) => addRequestChecks(route as Parameters<typeof addRequestChecks>[0]),
      resolve: () => ({ auth: authOrRefuse() }),
    },
  });
}
