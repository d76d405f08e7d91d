/**
 * `X-API-Key` authentication and the per-minute rate limit, as a macro
 * (`apiKey: true` on a route). The macro also puts `security` on the route's
 * OpenAPI operation (STYLE: security in `guard({detail})` is ignored).
 *
 * Per request: a shape check, then ONE statement that finds the key and
 * counts the request in the account's minute window. `RateLimit-*` headers go on every
 * authenticated response; over the limit: 429 RATE_LIMITED with Retry-After
 * (CONTRACT 2). Spec: Authentication 1–3.
 */
import { Elysia } from "elysia";
import type { AppDeps } from "../app.ts";
import { AppError } from "../errors.ts";
import { authenticateAndCount, touchApiKey, type AuthContext } from "../modules/accounts/service.ts";
import { decide, rateLimitHeaders, windowStart } from "../modules/accounts/rate-limit.ts";
import { planOf } from "../modules/billing/plans.ts";

export const API_KEY_SECURITY = [{ ApiKeyAuth: [] as string[] }];

export function authPlugin(deps: Pick<AppDeps, "db" | "clock" | "log">) {
  return new Elysia().macro({
    apiKey: {
      detail: { security: API_KEY_SECURITY },
      async resolve({ request, set }): Promise<{ auth: AuthContext }> {
        const key = request.headers.get("x-api-key")?.trim() ?? "";
        const now = deps.clock.now();
        const found = key ? await authenticateAndCount(deps.db, key, windowStart(now, 60_000)) : undefined;
        if (!found) throw new AppError("INVALID_API_KEY", key ? "The API key is invalid or has been revoked." : "Send your API key in the X-API-Key header.");
        const auth: AuthContext = { keyId: found.keyId, account: found.account };
        const plan = planOf(auth.account.plan);
        const decision = decide(found.count, plan.rate_limit_per_minute, 60_000, now);
        const headers = rateLimitHeaders(decision);
        Object.assign(set.headers, headers);
        if (!decision.allowed)
          throw new AppError("RATE_LIMITED", `Rate limit of ${plan.rate_limit_per_minute} requests per minute exceeded for this account; retry after ${decision.resetSeconds} s.`, {}, { ...headers, "retry-after": String(decision.resetSeconds) });
        // Best effort, off the request's critical path.
        touchApiKey(deps.db, auth.keyId, now).catch((e) => deps.log.debug("touch api key failed", { error: e }));
        return { auth };
      },
    },
  });
}
