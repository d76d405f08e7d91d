/**
 * The customer dashboard (docs/dashboard.md): a server-rendered web application under
 * `/dashboard`, served by the API process.
 *
 * Why a separate Elysia instance behind an `onRequest` hook: the API's core
 * plugin renders every failure as the JSON envelope from a *global* `onError`
 * (which runs before a module's own), and answers unmatched paths with the
 * JSON 404; dashboard failures and unknown pages must render HTML pages, with
 * the dashboard's security headers on every answer. So the outer plugin hands
 * every `/dashboard…` request, after the core `onRequest` (request id,
 * HTTPS-only check), to an inner app with its own form parser (64 KiB cap,
 * unreadable text refused) and error pages, and adds the security headers to
 * whatever it answers. The JSON body parser is no longer in the way: it is
 * scoped to the `/v1` modules (`jsonBodies` in http/body.ts). The inner routes
 * are never registered on the API app, so they cannot appear in the OpenAPI
 * document.
 */
import { Elysia } from "elysia";
import type { AppDeps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { clientIp } from "../../http/client-ip.ts";
import { safePathname } from "../../http/core.ts";
import { systemResolver, type Resolver } from "../webhooks/address-guard.ts";
import { senderFromConfig } from "../webhooks/attempt.ts";
import { billingFor } from "../billing/service.ts";
import type { BillingProvider } from "./billing.ts";
import { BodyTooLarge, htmlResponse, isReadablePath, parseForm, requestInfo, type RouteDeps } from "./http.ts";
import { accountRoutes } from "./routes/account.ts";
import { authRoutes } from "./routes/auth.ts";
import { billingRoutes } from "./routes/billing.ts";
import { profileRoutes } from "./routes/profile.ts";
import { webhookRoutes } from "./routes/webhooks.ts";
import { defaultPasswordWork, type PasswordWork } from "./service.ts";
import { messagePage } from "./views/account.ts";

export type { BillingProvider } from "./billing.ts";

/** Content-Security-Policy of every dashboard response: same-origin scripts and styles only, no inline script, no framing. */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const ASSETS: Record<string, { file: string; type: string }> = {
  "dashboard.css": { file: "dashboard.css", type: "text/css; charset=utf-8" },
  "dashboard.js": { file: "dashboard.js", type: "text/javascript; charset=utf-8" },
};

/** Security headers added to every `/dashboard…` response. */
export function applySecurityHeaders(h: Headers, isAsset: boolean): void {
  h.set("content-security-policy", DASHBOARD_CSP);
  h.set("x-content-type-options", "nosniff");
  h.set("x-frame-options", "DENY");
  h.set("referrer-policy", "same-origin");
  h.set("cross-origin-opener-policy", "same-origin");
  h.set("cross-origin-resource-policy", "same-origin");
  h.set("permissions-policy", "camera=(), microphone=(), geolocation=(), payment=()");
  // Pages can show a fresh API key or signing secret: never store them in any cache.
  if (!isAsset) h.set("cache-control", "no-store");
}

function dashboardApp(rd: RouteDeps) {
  const assets = new Map(Object.entries(ASSETS).map(([name, a]) => [name, { ...a, body: Bun.file(new URL(`./assets/${a.file}`, import.meta.url)) }]));
  const notFound = () => htmlResponse(messagePage("Page not found", "There is no such page in the dashboard."), 404);
  return new Elysia()
    // A path with NUL, control characters or broken percent-encoding names nothing: 404 before any route decodes it.
    .onRequest(({ request }) => (isReadablePath(new URL(request.url).pathname) ? undefined : notFound()))
    .onParse(({ request }) => parseForm(request))
    .onError(({ code, error, request }) => {
      if (code === "NOT_FOUND") return notFound();
      if (error instanceof AppError && error.status === 404) return htmlResponse(messagePage("Not found", "There is no such item on your account."), 404);
      if (error instanceof BodyTooLarge || (error as { cause?: unknown }).cause instanceof BodyTooLarge)
        return htmlResponse(messagePage("Form too large", "The form was larger than 64 KiB."), 413, { connection: "close" });
      if (code === "PARSE") return htmlResponse(messagePage("Bad request", "The form could not be read."), 400);
      rd.deps.log.error("dashboard error", { path: new URL(request.url).pathname, error: error instanceof Error ? error : String(error) });
      return htmlResponse(messagePage("Something went wrong", "The page could not be shown. Try again in a moment."), 500);
    })
    .get("/dashboard/assets/:name", ({ params }) => {
      const a = assets.get(params.name);
      if (!a) return htmlResponse(messagePage("Page not found", "There is no such file."), 404);
      return new Response(a.body, { headers: { "content-type": a.type, "cache-control": "public, max-age=3600" } });
    })
    .use(authRoutes(rd))
    .use(accountRoutes(rd))
    .use(billingRoutes(rd))
    .use(webhookRoutes(rd))
    .use(profileRoutes(rd));
}

/** Options for tests and future deployments. */
export interface DashboardOptions {
  /** Billing provider for plan changes; default: the one BILLING_PROVIDER names (docs/billing.md). */
  billing?: BillingProvider;
  /** DNS resolver for test fires (tests map names to loopback receivers). */
  resolver?: Resolver;
  /** Gate and verifier for password hashing (default: 4 at once, `Bun.password.verify`); tests count verifications through it. */
  work?: PasswordWork;
}

/**
 * The dashboard plugin: `.use(dashboardModule(deps))` in `buildApp`. Starts
 * nothing (the webhook sender opens connections only when a test fire runs).
 */
export function dashboardModule(deps: AppDeps & { resolver?: Resolver }, opts: DashboardOptions = {}) {
  const rd: RouteDeps = {
    deps,
    billing: opts.billing ?? billingFor(deps).provider,
    sender: senderFromConfig(deps, opts.resolver ?? deps.resolver ?? systemResolver),
    work: opts.work ?? defaultPasswordWork(),
  };
  const inner = dashboardApp(rd);
  return new Elysia({ name: "dashboard" }).onRequest(async ({ request, set, server }) => {
    const path = safePathname(request.url);
    if (path !== "/dashboard" && !path.startsWith("/dashboard/")) return;
    const socket = server?.requestIP(request)?.address;
    requestInfo.set(request, { ip: clientIp(socket, request.headers.get("x-forwarded-for"), deps.config.trustProxy) });
    const res = await inner.handle(request);
    applySecurityHeaders(res.headers, path.startsWith("/dashboard/assets/") && res.status === 200);
    const rid = set.headers["x-request-id"];
    if (rid) res.headers.set("x-request-id", String(rid));
    return res;
  });
}
