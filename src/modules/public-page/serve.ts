/** Serving a link (docs/tracking-page.md#serving): limits, lookup, caching headers, the view count. */
import { createHash } from "node:crypto";
import type { AppDeps } from "../../deps.ts";
import { addressLimitKey, clientIp } from "../../http/client-ip.ts";
import type { SocketAddressOf } from "../../http/server.ts";
import { hitFixedWindow } from "../accounts/rate-limit.ts";
import { observePublicPage } from "../metrics/registry.ts";
import { findLink, hashToken, type LinkTarget } from "../following/public-links.ts";
import { pickLang } from "./i18n.ts";
import { pageData } from "./service.ts";
import { accentStyle, messagePage, trackingPage, words } from "./view.ts";

/** Page views per minute per client address (IPv6 per /64), and per token, across replicas. */
const PAGE_LIMIT_PER_IP = 120;
export const PAGE_LIMIT_PER_TOKEN = 60;
/** `max-age` of the page and its JSON, seconds: short, so a rotate or a new scan shows within a minute. */
const PAGE_MAX_AGE_S = 60;

const css = Bun.file(new URL("./assets/page.css", import.meta.url));
export const cssText = await css.text();
const cssVersion = createHash("sha256").update(cssText).digest("hex").slice(0, 12);
/** The stylesheet's URL: versioned by content, so it can be cached for a year. */
export const CSS_HREF = `/t/assets/page.css?v=${cssVersion}`;

/** Headers of every page answer (HTML): no indexing, no referrer, no script, framing per the account. */
export function pageHeaders(styleSource: string | null, frameAncestors: readonly string[]): Record<string, string> {
  const frames = frameAncestors.length ? frameAncestors.join(" ") : "'none'";
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": `default-src 'none'; style-src 'self'${styleSource ? ` ${styleSource}` : ""}; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors ${frames}`,
    "x-robots-tag": "noindex, nofollow",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "cross-origin-opener-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()",
    ...(frameAncestors.length ? {} : { "x-frame-options": "DENY" }),
  };
}

const jsonHeaders = {
  "content-type": "application/json; charset=utf-8",
  "access-control-allow-origin": "*",
  "x-robots-tag": "noindex, nofollow",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
};

/** A cacheable answer: strong ETag of the body, `304` when the client has it, `private` (the URL is a secret). */
function cached(request: Request, body: string, headers: Record<string, string>): Response {
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
  const h = {
    ...headers,
    etag,
    "cache-control": `private, max-age=${PAGE_MAX_AGE_S}`,
    vary: "Accept-Language",
  };
  const inm = request.headers.get("if-none-match");
  if (inm?.split(",").some((t) => t.trim().replace(/^W\//, "") === etag))
    return new Response(null, { status: 304, headers: h });
  return new Response(body, { status: 200, headers: h });
}

/** Counts a view for the account's day (no address, no token kept). */
async function countView(deps: AppDeps, accountId: string): Promise<void> {
  const day = new Date(deps.clock.now()).toISOString().slice(0, 10);
  await deps.db.$client`
    insert into public_page_views (account_id, day, views) values (${accountId}, ${day}, 1)
    on conflict (account_id, day) do update set views = public_page_views.views + 1
  `;
}

/** What a link opens: the page, its JSON, or the account's logo. */
export type LinkKind = "html" | "json" | "logo";

/** The handler of a link request: limits first (so unknown tokens count too), then one lookup by hash. */
export function linkOpener(deps: AppDeps, socketAddressOf: SocketAddressOf) {
  const limited = async (request: Request, token: string): Promise<number | undefined> => {
    const ip = clientIp(socketAddressOf(request), request.headers.get("x-forwarded-for"), deps.config.trustProxy);
    const now = deps.clock.now();
    const byIp = await hitFixedWindow(deps.db, `tp:ip:${addressLimitKey(ip)}`, PAGE_LIMIT_PER_IP, 60_000, now);
    // Keyed by the token's hash (the token itself is never stored), counted whether or not it exists.
    const byToken = await hitFixedWindow(
      deps.db,
      `tp:tok:${hashToken(token.slice(0, 64))}`,
      PAGE_LIMIT_PER_TOKEN,
      60_000,
      now,
    );
    if (byIp.allowed && byToken.allowed) return undefined;
    return Math.max(byIp.allowed ? 0 : byIp.resetSeconds, byToken.allowed ? 0 : byToken.resetSeconds);
  };

  const OUTCOME = { 200: "ok", 304: "not_modified", 404: "not_found", 429: "limited" } as const;
  const counted = async (request: Request, raw: string, kind: LinkKind): Promise<Response> => {
    const res = await serve(request, raw, kind);
    const outcome = OUTCOME[res.status as keyof typeof OUTCOME];
    if (outcome) observePublicPage(kind, outcome);
    return res;
  };
  const serve = async (request: Request, raw: string, kind: LinkKind): Promise<Response> => {
    const url = new URL(request.url);
    const lang = pickLang(url.searchParams.get("lang"), request.headers.get("accept-language"));
    const w = words(lang);
    const token = raw.slice(0, 200);
    const retry = await limited(request, token);
    if (retry !== undefined) {
      const headers = { "retry-after": String(retry), "cache-control": "no-store" };
      return kind === "json"
        ? Response.json(
            { success: false, error: { code: "RATE_LIMITED", message: w.limited } },
            { status: 429, headers: { ...jsonHeaders, ...headers } },
          )
        : new Response(messagePage(lang, w.limited, w.limited, CSS_HREF), {
            status: 429,
            headers: { ...pageHeaders(null, []), ...headers },
          });
    }
    const link: LinkTarget | undefined = await findLink(deps.db, token);
    const found = link ? await pageData(deps, link, lang) : undefined;
    if (!link || !found) return notFound(kind, lang);
    if (kind === "logo") {
      if (!found.branding.logoData) return notFound(kind, lang);
      return new Response(Buffer.from(found.branding.logoData, "base64"), {
        headers: {
          "content-type": "image/png",
          "cache-control": `private, max-age=${PAGE_MAX_AGE_S}`,
          "x-content-type-options": "nosniff",
          "content-security-policy": "default-src 'none'",
          "cross-origin-resource-policy": "same-origin",
        },
      });
    }
    await countView(deps, link.accountId);
    if (kind === "json") return cached(request, JSON.stringify({ success: true, data: found.data }), jsonHeaders);
    const selfPath = `/t/${token}`;
    const body = trackingPage(found.data, {
      selfPath,
      cssHref: CSS_HREF,
      logoHref: found.data.merchant.has_logo ? `${selfPath}/logo` : null,
    });
    const style = accentStyle(found.data.merchant.accent_color);
    return cached(request, body, pageHeaders(style.source, found.branding.frameAncestors));
  };
  return counted;
}

function notFound(kind: LinkKind, lang: ReturnType<typeof pickLang>): Response {
  const w = words(lang);
  if (kind === "json")
    return Response.json(
      { success: false, error: { code: "NOT_FOUND", message: w.notFound } },
      { status: 404, headers: { ...jsonHeaders, "cache-control": "no-store" } },
    );
  return new Response(messagePage(lang, w.notFoundTitle, w.notFound, CSS_HREF), {
    status: 404,
    headers: { ...pageHeaders(null, []), "cache-control": "no-store" },
  });
}
