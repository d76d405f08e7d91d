/** Bearer tokens of couriers that authenticate first: one request per refresh, however many wait. */
import type { CourierResponse } from "./types.ts";
import { CourierError, type AdapterContext } from "./types.ts";
import { parseJson, throwForStatus } from "./kit.ts";

interface CachedToken {
  token: string;
  /** ms since the epoch on ctx.now()'s clock; Infinity = until refused. */
  expiresAt: number;
}

export class TokenCache {
  private readonly tokens = new Map<string, CachedToken>();
  private readonly pending = new Map<string, Promise<CachedToken>>();

  /** @param fetchToken requests a new token; `expiresInS` undefined = no stated lifetime. */
  constructor(private readonly fetchToken: (ctx: AdapterContext) => Promise<{ token: string; expiresInS?: number }>) {}

  /** A valid token for `key`; a new one when the cached one expired or equals `stale`. @throws CourierError from fetchToken */
  async get(ctx: AdapterContext, key: string, stale?: string): Promise<string> {
    const cur = this.tokens.get(key);
    if (cur && cur.expiresAt > ctx.now() && cur.token !== stale) return cur.token;
    let p = this.pending.get(key);
    if (!p) {
      const issuedAt = ctx.now();
      p = this.fetchToken(ctx)
        .then(({ token, expiresInS }) => {
          // Renew a minute early so a token never expires between check and use.
          const expiresAt =
            expiresInS === undefined ? Infinity : issuedAt + Math.max(expiresInS - 60, expiresInS / 2) * 1000;
          const entry = { token, expiresAt };
          this.tokens.set(key, entry);
          return entry;
        })
        .finally(() => this.pending.delete(key));
      this.pending.set(key, p);
    }
    return (await p).token;
  }

  /** Sends with a token; on 401 refreshes once and sends again. @throws CourierError auth when refused again */
  async send(
    ctx: AdapterContext,
    key: string,
    courier: string,
    call: (token: string) => Promise<CourierResponse>,
  ): Promise<CourierResponse> {
    let token = await this.get(ctx, key);
    let res = await call(token);
    if (res.status === 401) {
      token = await this.get(ctx, key, token);
      res = await call(token);
      if (res.status === 401) throw new CourierError("auth", `${courier}: token refused after a refresh`, 401);
    }
    return res;
  }

  /** Forgets every token (tests). */
  clear(): void {
    this.tokens.clear();
  }
}

/** The cache key of one courier account: base URL + the credential variable that names the account. */
export function accountKey(ctx: AdapterContext, accountVar: string): string {
  return `${ctx.http.baseUrl}\n${ctx.credentials[accountVar] ?? ""}`;
}

/** Reads an OAuth `{access_token, expires_in}` (number or numeric string, seconds). @throws CourierError auth | backend */
export function readTokenResponse(
  courier: string,
  status: number,
  text: string,
): { token: string; expiresInS: number } {
  if (status === 400 || status === 401 || status === 403)
    throw new CourierError("auth", `${courier}: token request refused (${status})`, status);
  throwForStatus(courier, status, { notFoundOn404: false });
  const body = parseJson(text) as { access_token?: unknown; expires_in?: unknown } | null;
  const token = typeof body?.access_token === "string" ? body.access_token : "";
  const expiresInS = Number(body?.expires_in);
  if (!token) throw new CourierError("backend", `${courier}: token response without access_token`);
  return { token, expiresInS: Number.isFinite(expiresInS) && expiresInS > 0 ? expiresInS : 3600 };
}
