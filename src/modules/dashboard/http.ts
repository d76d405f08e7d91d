/**
 * HTTP helpers shared by the dashboard routes: HTML and redirect responses,
 * form bodies, the session guard and the CSRF check. Handlers get the
 * account from {@link withSession} / {@link withForm}, never from the
 * request directly.
 */
import type { AppDeps } from "../../app.ts";
import { MAX_BODY_BYTES } from "../../http/core.ts";
import type { SafeHtml } from "./html.ts";
import type { BillingProvider } from "./billing.ts";
import { readCookie, resolveSession, safeEqual, SESSION_COOKIE, type DashboardSession } from "./session.ts";
import { messagePage } from "./views/account.ts";
import type { PageSession } from "./views/layout.ts";
import type { WebhookSender } from "../webhooks/http.ts";

/** What dashboard routes need besides the app's dependencies. */
export interface RouteDeps {
  deps: AppDeps;
  billing: BillingProvider;
  sender: WebhookSender;
}

/** Request facts the outer hook computed (client IP honours TRUST_PROXY). */
export const requestInfo = new WeakMap<Request, { ip: string }>();
export const ipOf = (r: Request) => requestInfo.get(r)?.ip ?? "unknown";

/** A parsed `application/x-www-form-urlencoded` body: every field as a list of values. */
export type FormBody = Record<string, string[]>;

export class BodyTooLarge extends Error {}

/** Parses a form body (at most 64 KiB, like the API). Other content types give an empty form. */
export async function parseForm(request: Request): Promise<FormBody> {
  const buf = await request.arrayBuffer();
  if (buf.byteLength > MAX_BODY_BYTES) throw new BodyTooLarge();
  const type = request.headers.get("content-type") ?? "";
  const out: FormBody = {};
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) return out;
  for (const [k, v] of new URLSearchParams(new TextDecoder().decode(buf))) (out[k] ??= []).push(v);
  return out;
}

/** First value of a form field, or "". */
export const str = (f: FormBody, name: string): string => f[name]?.[0] ?? "";

/** A full HTML response. */
export function htmlResponse(body: SafeHtml, status = 200, headers: HeadersInit = {}): Response {
  const h = new Headers(headers);
  h.set("content-type", "text/html; charset=utf-8");
  return new Response(`${body}`, { status, headers: h });
}

/** 303 See Other (after a POST) or a plain redirect, with optional `Set-Cookie` values. */
export function redirect(location: string, cookies: string[] = [], status = 303): Response {
  const h = new Headers({ location });
  for (const c of cookies) h.append("set-cookie", c);
  return new Response(null, { status, headers: h });
}

/** Only same-site dashboard paths are accepted as a post-sign-in target (no open redirect). */
export function safeNext(next: string | undefined | null): string {
  return next && /^\/dashboard(\/[A-Za-z0-9_\-/]*)?$/.test(next) ? next : "/dashboard";
}

export const pageSession = (s: DashboardSession): PageSession => ({ email: s.account.email, csrfToken: s.csrfToken });

type Handler = (s: DashboardSession, request: Request) => Promise<Response> | Response;

/** Runs `h` with the signed-in session; otherwise redirects to sign-in, remembering the page. */
export async function withSession(rd: RouteDeps, request: Request, h: Handler): Promise<Response> {
  const token = readCookie(request.headers.get("cookie"), SESSION_COOKIE);
  const s = await resolveSession(rd.deps.db, rd.deps.clock, token);
  if (!s) {
    const path = new URL(request.url).pathname;
    return redirect(`/dashboard/sign-in${request.method === "GET" && path !== "/dashboard" ? `?next=${encodeURIComponent(path)}` : ""}`);
  }
  return h(s, request);
}

/** True when the browser says the form came from another site (Fetch Metadata). */
export const crossSite = (r: Request) => r.headers.get("sec-fetch-site") === "cross-site";

/** The 403 page for a missing, wrong or stale CSRF token. */
export const csrfRefused = (s?: PageSession) =>
  htmlResponse(messagePage("Form expired", "This form could not be accepted: it is stale or did not come from this dashboard. Go back, reload the page and try again.", s), 403);

/**
 * For POST forms of a signed-in user: session, then the CSRF token
 * (`_csrf` must equal the session's token, compared in constant time).
 */
export function withForm(rd: RouteDeps, request: Request, form: FormBody, h: (s: DashboardSession, form: FormBody) => Promise<Response> | Response): Promise<Response> {
  return withSession(rd, request, (s) => {
    if (crossSite(request) || !safeEqual(str(form, "_csrf"), s.csrfToken)) return csrfRefused(pageSession(s));
    return h(s, form);
  });
}
