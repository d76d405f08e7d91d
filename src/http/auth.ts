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
 * Per request: a shape check, then ONE statement that finds the key and
 * counts the request in the account's minute window. `RateLimit-*` headers go
 * on every authenticated response, errors (422 …) included; over the limit:
 * 429 RATE_LIMITED with Retry-After.
 *
 * The `apiKey: true` macro hands the result to the route as `auth`, puts
 * `security` on the route's OpenAPI operation (security in `guard({detail})`
 * is ignored), and checks the route's JSON body against its schema with our
 * own validator (see `validation.ts`, `bodyCheckFor`).
 */
import { Elysia } from "elysia";
import type { CoreDeps } from "../core-deps.ts";
import { AppError } from "../errors.ts";
import { authenticateAndCount, touchApiKey, type AuthContext } from "../modules/accounts/service.ts";
import { decide, RATE_LIMIT_WINDOW_MS, rateLimitHeaders, windowStart } from "../modules/accounts/rate-limit.ts";
import { planOf } from "../domain/plans.ts";
import { pathOf } from "./core.ts";
import { addBodyCheck } from "./validation.ts";

export const API_KEY_SECURITY = [{ ApiKeyAuth: [] as string[] }];

type AuthDeps = Pick<CoreDeps, "db" | "clock" | "log">;

/** Requests already authenticated by the gate (one lookup per request, however many hooks ask). */
const authenticated = new WeakMap<Request, AuthContext>();

/** The authenticated key and account of `request`, once the gate or the macro has authenticated it. */
export const authOf = (request: Request): AuthContext | undefined => authenticated.get(request);

/** True for the paths that need a key (spec: Authentication 1, "every /v1 request"). */
export const needsApiKey = (path: string) => path === "/v1" || path.startsWith("/v1/");

/**
 * Authenticates `request` and counts it against the account's per-minute
 * limit; `RateLimit-*` headers are added to `headers` (the response's).
 * @throws AppError INVALID_API_KEY (401) for a missing, malformed, unknown or revoked key
 * @throws AppError RATE_LIMITED (429, with Retry-After) over the plan's per-minute limit
 */
async function authenticate(deps: AuthDeps, request: Request, headers: Record<string, unknown>): Promise<AuthContext> {
  const key = request.headers.get("x-api-key")?.trim() ?? "";
  const now = deps.clock.now();
  const found = key ? await authenticateAndCount(deps.db, key, windowStart(now, RATE_LIMIT_WINDOW_MS)) : undefined;
  if (!found) throw new AppError("INVALID_API_KEY", key ? "The API key is invalid or has been revoked." : "Send your API key in the X-API-Key header.");
  const auth: AuthContext = { keyId: found.keyId, account: found.account };
  const plan = planOf(auth.account.plan);
  const decision = decide(found.count, plan.rate_limit_per_minute, RATE_LIMIT_WINDOW_MS, now);
  const rl = rateLimitHeaders(decision);
  Object.assign(headers, rl);
  if (!decision.allowed)
    throw new AppError("RATE_LIMITED", `Rate limit of ${plan.rate_limit_per_minute} requests per minute exceeded for this account; retry after ${decision.resetSeconds} s.`, {}, { ...rl, "retry-after": String(decision.resetSeconds) });
  // Best effort, off the request's critical path.
  touchApiKey(deps.db, auth.keyId, now).catch((e) => deps.log.debug("touch api key failed", { error: e }));
  authenticated.set(request, auth);
  return auth;
}

/**
 * The door: authenticates every `/v1` request before routing, parsing or
 * validation. Use once, at the root, right after the core plugin.
 */
export function apiKeyGate(deps: AuthDeps) {
  return new Elysia({ name: "api-key-gate" }).onRequest(async ({ request, set }) => {
    if (needsApiKey(pathOf(request.url))) await authenticate(deps, request, set.headers);
  });
}

/** The `apiKey: true` macro for the modules' routes. */
export function authPlugin(deps: AuthDeps) {
  return new Elysia().macro({
    apiKey: {
      detail: { security: API_KEY_SECURITY },
      introspect: (route: unknown) => addBodyCheck(route as Parameters<typeof addBodyCheck>[0]),
      // The gate has already run for /v1 paths; a route elsewhere is authenticated here (after validation).
      async resolve({ request, set }): Promise<{ auth: AuthContext }> {
        return { auth: authenticated.get(request) ?? (await authenticate(deps, request, set.headers)) };
      },
    },
  });
}
