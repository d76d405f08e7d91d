/**
 * The customer dashboard: server-rendered pages under `/dashboard`, an Elysia module with its own form parser, HTML
 * error pages and security headers. Why: docs/dashboard.md#decisions.
 */
import { Elysia } from "elysia";
import type { AppDeps } from "../../deps.ts";
import { AppError } from "../../lib/errors.ts";
import { clientIp } from "../../http/client-ip.ts";
import { isDatabaseUnavailable, safePathname } from "../../http/core.ts";
import { syncRequestHook } from "../../http/elysia-quirks.ts";
import type { SocketAddressOf } from "../../http/server.ts";
import { systemResolver, type Resolver } from "../webhooks/delivery/address-guard.ts";
import { senderFromConfig } from "../webhooks/delivery/attempt.ts";
import { billingFor } from "../billing/service.ts";
import type { BillingProvider } from "./billing.ts";
import { BodyTooLarge, htmlResponse, isReadablePath, parseForm, type RouteDeps } from "./http.ts";
import { accountRoutes } from "./routes/account.ts";
import { alertRoutes } from "./routes/alerts.ts";
import { authRoutes } from "./routes/auth.ts";
import { billingRoutes } from "./routes/billing.ts";
import { BRANDING_FORM_BYTES, BRANDING_PATH, brandingRoutes } from "./routes/branding.ts";
import { profileRoutes } from "./routes/profile.ts";
import { shipmentRoutes } from "./routes/shipments.ts";
import { actionRoutes } from "./routes/actions.ts";
import { webhookRoutes } from "./routes/webhooks.ts";
import { webhookAuditRoute } from "./routes/webhook-audit.ts";
import { defaultPasswordWork, type PasswordWork } from "./service.ts";
import { messagePage } from "./views/account.ts";

/** Content-Security-Policy of every dashboard response: same-origin scripts and styles only, no inline script, no framing. */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const ASSETS: Record<string, { file: string; type: string }> = {
  "dashboard.css": { file: "dashboard.css", type: "text/css; charset=utf-8" },
  "dashboard.js": { file: "dashboard.js", type: "text/javascript; charset=utf-8" },
};

/** Security headers added to every `/dashboard…` response. */
function applySecurityHeaders(h: Headers, isAsset: boolean): void {
  // The tracking page preview keeps its own policy: `default-src 'none'` with no script source allows no script at all.
  const own = h.get("content-security-policy");
  if (!own?.startsWith("default-src 'none';") || own.includes("script-src"))
    h.set("content-security-policy", DASHBOARD_CSP);
  h.set("x-content-type-options", "nosniff");
  h.set("x-frame-options", "DENY");
  // A page with a token in its path (a password or confirmation link) keeps its stricter `no-referrer`.
  if (h.get("referrer-policy") !== "no-referrer") h.set("referrer-policy", "same-origin");
  h.set("cross-origin-opener-policy", "same-origin");
  h.set("cross-origin-resource-policy", "same-origin");
  h.set("permissions-policy", "camera=(), microphone=(), geolocation=(), payment=()");
  // Pages can show a fresh API key or signing secret.
  if (!isAsset) h.set("cache-control", "no-store");
}

const isDashboardPath = (path: string) => path === "/dashboard" || path.startsWith("/dashboard/");
const isAssetPath = (path: string) => path.startsWith("/dashboard/assets/");

function finish(res: Response, path: string, rid: unknown): Response {
  applySecurityHeaders(res.headers, isAssetPath(path) && res.status === 200);
  if (rid) res.headers.set("x-request-id", String(rid));
  return res;
}

/** Every dashboard failure as an HTML page. */
function errorPage(rd: RouteDeps, code: unknown, error: unknown, request: Request): Response {
  if (code === "NOT_FOUND") return notFound();
  if (error instanceof AppError && error.status === 404)
    return htmlResponse(messagePage("Not found", "There is no such item on your account."), 404);
  const tooLarge = error instanceof BodyTooLarge ? error : (error as { cause?: unknown }).cause;
  if (tooLarge instanceof BodyTooLarge)
    return htmlResponse(messagePage("Form too large", `The form was larger than ${tooLarge.limit / 1024} KiB.`), 413, {
      connection: "close",
    });
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof AppError && cause.code === "REQUEST_TIMEOUT")
    return htmlResponse(messagePage("Request timeout", "The form took too long to arrive. Send it again."), 408, {
      connection: "close",
    });
  if (code === "PARSE") return htmlResponse(messagePage("Bad request", "The form could not be read."), 400);
  if (isDatabaseUnavailable(error)) {
    rd.deps.log.warn("database unavailable", { path: safePathname(request.url) });
    return htmlResponse(
      messagePage("Temporarily unavailable", "The service cannot reach its database. Try again in a moment."),
      503,
      { "retry-after": "5" },
    );
  }
  rd.deps.log.error("dashboard error", {
    path: safePathname(request.url),
    error: error instanceof Error ? error : String(error),
  });
  return htmlResponse(messagePage("Something went wrong", "The page could not be shown. Try again in a moment."), 500);
}

const notFound = () => htmlResponse(messagePage("Page not found", "There is no such page in the dashboard."), 404);

export interface DashboardOptions {
  /** Billing provider for plan changes; default: the one BILLING_PROVIDER names (docs/billing.md). */
  billing?: BillingProvider;
  /** DNS resolver for test fires. */
  resolver?: Resolver;
  /** Gate and verifier for password hashing (default: 4 at once, `Bun.password.verify`). */
  work?: PasswordWork;
  /** The client's socket address of a request (none without a listening server, as in `handle()`). */
  socketAddressOf?: SocketAddressOf;
}

/** The dashboard plugin for `buildApp`; starts nothing (the sender connects only for a test fire). */
export function dashboardModule(deps: AppDeps & { resolver?: Resolver }, opts: DashboardOptions = {}) {
  const socketAddressOf = opts.socketAddressOf ?? (() => undefined);
  const rd: RouteDeps = {
    deps,
    billing: opts.billing ?? billingFor(deps).provider,
    sender: senderFromConfig(deps, opts.resolver ?? deps.resolver ?? systemResolver),
    work: opts.work ?? defaultPasswordWork(),
    clientIpOf: (request) =>
      clientIp(socketAddressOf(request), request.headers.get("x-forwarded-for"), deps.config.trustProxy),
  };
  const assets = new Map(
    Object.entries(ASSETS).map(([name, a]) => [
      name,
      { ...a, body: Bun.file(new URL(`./assets/${a.file}`, import.meta.url)) },
    ]),
  );
  return (
    new Elysia({ name: "dashboard" })
      // Runs for every request: a string search skips other paths unparsed (WHATWG parsing decodes no escapes).
      .onRequest(
        syncRequestHook(function dashboardDoor({ request, set }) {
          if (!request.url.includes("dashboard")) return;
          const path = safePathname(request.url);
          if (!isDashboardPath(path)) return;
          if (!isReadablePath(path)) return finish(notFound(), path, set.headers["x-request-id"]);
        }),
      )
      .onParse(({ request }) =>
        parseForm(request, safePathname(request.url) === BRANDING_PATH ? BRANDING_FORM_BYTES : undefined),
      )
      .onAfterHandle(({ request, response, set }) => {
        if (response instanceof Response) finish(response, safePathname(request.url), set.headers["x-request-id"]);
      })
      .onError(({ code, error, request, set }) =>
        finish(errorPage(rd, code, error, request), safePathname(request.url), set.headers["x-request-id"]),
      )
      .get("/dashboard/assets/:name", ({ params }) => {
        const a = assets.get(params.name);
        if (!a) return htmlResponse(messagePage("Page not found", "There is no such file."), 404);
        return new Response(a.body, { headers: { "content-type": a.type, "cache-control": "public, max-age=3600" } });
      })
      .use(authRoutes(rd))
      .use(accountRoutes(rd))
      .use(billingRoutes(rd))
      .use(webhookRoutes(rd))
      .use(webhookAuditRoute(rd))
      .use(profileRoutes(rd))
      .use(shipmentRoutes(rd))
      .use(actionRoutes(rd))
      .use(alertRoutes(rd))
      .use(brandingRoutes(rd))
      .all("/dashboard", () => notFound())
      .all("/dashboard/*", () => notFound())
  );
}
