/**
 * HTTP helpers of the dashboard routes: HTML and redirects, form bodies, the session guard, the CSRF check
 * (docs/dashboard.md#decisions, "Forms and cookies", "CSRF"). Handlers get the account from {@link withSession}.
 */
import type { AppDeps } from "../../deps.ts";
import { MAX_BODY_BYTES } from "../../http/core.ts";
import { readBodyCapped } from "../../http/body.ts";
import { AppError } from "../../lib/errors.ts";
import type { SafeHtml } from "./html.ts";
import type { BillingProvider } from "./billing.ts";
import {
  cookieText,
  PRE_CSRF_COOKIE,
  putCookie,
  randomToken,
  resolveSession,
  safeEqual,
  SESSION_COOKIE,
  type CookieJar,
  type DashboardSession,
} from "./session.ts";
import { messagePage } from "./views/account.ts";
import type { PageSession } from "./views/layout.ts";
import type { WebhookSender } from "../webhooks/delivery/http.ts";
import type { PasswordWork } from "./service.ts";

/** What dashboard routes need besides the app's dependencies. */
export interface RouteDeps {
  deps: AppDeps;
  billing: BillingProvider;
  sender: WebhookSender;
  work: PasswordWork;
  /** The client's address for the sign-in and sign-up throttles (`X-Forwarded-For` as TRUST_PROXY allows). */
  clientIpOf: (request: Request) => string;
}

/** A parsed `application/x-www-form-urlencoded` body: every field as a list of values. */
export type FormBody = Record<string, string[]>;

function appendField(out: FormBody, name: string, value: string): void {
  const values = out[name] ?? [];
  values.push(value);
  out[name] = values;
}

/** A form body past its route's cap; `limit` (bytes) is named on the 413 page. */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number = MAX_FORM_BYTES) {
    super(`form larger than ${limit} bytes`);
  }
}

export const MAX_FORM_BYTES = MAX_BODY_BYTES;

/** Fields holding a NUL or invalid UTF-8 (unstorable), kept beside the form so its values stay plain strings. */
const unreadable = new WeakMap<FormBody, Set<string>>();
/** Multipart file parts as their exact bytes (first part per name), beside the text the other forms read. */
const fileParts = new WeakMap<FormBody, Map<string, Uint8Array>>();

/** The bytes of file field `name` of a multipart form; undefined when none was chosen (empty part). */
export function fileBytes(form: FormBody, name: string): Uint8Array | undefined {
  const b = fileParts.get(form)?.get(name);
  return b && b.byteLength > 0 ? b : undefined;
}

/** Reads at most `limit` bytes of a body, then cancels; throws BodyTooLarge past it (or a larger `Content-Length`). */
async function readBounded(request: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > limit) throw new BodyTooLarge(limit);
  try {
    return await readBodyCapped(request, limit);
  } catch (err) {
    if (err instanceof AppError && err.code === "PAYLOAD_TOO_LARGE") throw new BodyTooLarge(limit);
    throw err;
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lossy = new TextDecoder("utf-8", { ignoreBOM: true });
const hex = (b: number) =>
  b >= 0x30 && b <= 0x39 ? b - 0x30 : b >= 0x41 && b <= 0x46 ? b - 0x37 : b >= 0x61 && b <= 0x66 ? b - 0x57 : -1;
/** The hex digit value of `bytes[i]`, -1 past the end or for a non-digit. */
const hexAt = (bytes: Uint8Array, i: number) => {
  const b = bytes[i];
  return b === undefined ? -1 : hex(b);
};

/** Percent-decodes one urlencoded name or value to bytes, as the URL Standard's form parser does. */
function percentDecode(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] ?? 0;
    const hi = b === 0x25 ? hexAt(bytes, i + 1) : -1;
    const lo = hi >= 0 ? hexAt(bytes, i + 2) : -1;
    if (lo >= 0) {
      out[n++] = hi * 16 + lo;
      i += 2;
    } else out[n++] = b === 0x2b ? 0x20 : b;
  }
  return out.subarray(0, n);
}

/** UTF-8 text of `bytes`, and whether it is storable (valid UTF-8, no NUL). */
function decodeText(bytes: Uint8Array): [string, boolean] {
  try {
    const s = utf8.decode(bytes);
    return [s, !s.includes("\0")];
  } catch {
    return [lossy.decode(bytes), false];
  }
}

/** Parses `application/x-www-form-urlencoded` bytes, remembering which fields were unreadable. */
function decodeForm(body: Uint8Array): FormBody {
  const out: FormBody = {};
  const bad = new Set<string>();
  let start = 0;
  for (let i = 0; i <= body.length; i++) {
    if (i < body.length && body[i] !== 0x26) continue;
    const part = body.subarray(start, i);
    start = i + 1;
    if (part.length === 0) continue;
    const eq = part.indexOf(0x3d);
    const [name, nameOk] = decodeText(percentDecode(eq < 0 ? part : part.subarray(0, eq)));
    const [value, valueOk] = decodeText(percentDecode(eq < 0 ? new Uint8Array(0) : part.subarray(eq + 1)));
    appendField(out, name, value);
    if (!nameOk || !valueOk) bad.add(nameOk ? name : "form");
  }
  if (bad.size) unreadable.set(out, bad);
  return out;
}

/**
 * Parses a form body of at most `limit` bytes (default 64 KiB; read as a capped stream): urlencoded or multipart
 * (files as UTF-8 text, their bytes kept for {@link fileBytes}); anything else is empty.
 * @throws BodyTooLarge past `limit`
 */
export async function parseForm(request: Request, limit = MAX_FORM_BYTES): Promise<FormBody> {
  const bytes = await readBounded(request, limit);
  const contentType = request.headers.get("content-type") ?? "";
  const type = contentType.toLowerCase();
  if (type.startsWith("multipart/form-data")) return decodeMultipart(bytes, contentType);
  if (!type.startsWith("application/x-www-form-urlencoded")) return {};
  return decodeForm(bytes);
}

async function decodeMultipart(bytes: Uint8Array, type: string): Promise<FormBody> {
  let parts: FormData;
  try {
    parts = await new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { "content-type": type } }).formData();
  } catch {
    return {};
  }
  const out: FormBody = {};
  const bad = new Set<string>();
  const files = new Map<string, Uint8Array>();
  for (const [name, v] of parts) {
    const raw = typeof v === "string" ? undefined : new Uint8Array(await v.arrayBuffer());
    if (raw && !files.has(name)) files.set(name, raw);
    const [text, ok] = raw ? decodeText(raw) : [v as string, !(v as string).includes("\0")];
    appendField(out, name, text);
    if (!ok) bad.add(name);
  }
  if (bad.size) unreadable.set(out, bad);
  if (files.size) fileParts.set(out, files);
  return out;
}

/** The inline message for a field holding a NUL character or invalid UTF-8. */
export const UNREADABLE_FIELD =
  "This contains characters that cannot be used (a NUL character or text that is not valid UTF-8).";

/** Inline errors for the listed fields that were unreadable (unreadable names under `form`); undefined when fine. */
export function unreadableFields(form: FormBody, fields: readonly string[]): Record<string, string> | undefined {
  const bad = unreadable.get(form);
  if (!bad) return undefined;
  const errors: Record<string, string> = {};
  for (const f of [...fields, "form"]) if (bad.has(f)) errors[f] = UNREADABLE_FIELD;
  return Object.keys(errors).length ? errors : undefined;
}

/** True when a path is valid percent-encoded UTF-8 without control characters; others get the 404 page. */
export function isReadablePath(rawPath: string): boolean {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return false;
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  return !/[\u0000-\u001f\u007f]/.test(decoded);
}

/** First value of a form field, or "". */
export const str = (f: FormBody, name: string): string => f[name]?.[0] ?? "";

/** A full HTML response. */
export function htmlResponse(body: SafeHtml, status = 200, headers: HeadersInit = {}): Response {
  const h = new Headers(headers);
  h.set("content-type", "text/html; charset=utf-8");
  return new Response(`${body}`, { status, headers: h });
}

/** 303 See Other (after a POST) or a plain redirect (302). Cookies go through Elysia's `cookie` context. */
export function redirect(location: string, status = 303): Response {
  return new Response(null, { status, headers: { location } });
}

/** Only same-site dashboard paths are accepted as a post-sign-in target (no open redirect). */
export function safeNext(next: string | undefined | null): string {
  return next && /^\/dashboard(\/[A-Za-z0-9_\-/]*)?$/.test(next) ? next : "/dashboard";
}

export const pageSession = (s: DashboardSession): PageSession => ({ email: s.account.email, csrfToken: s.csrfToken });

/** The parts of Elysia's request context a session check reads. */
export interface SessionRequest {
  request: Request;
  cookie: CookieJar;
}

/** A form POST as Elysia hands it over: the body is the dashboard parser's {@link FormBody}. */
export interface FormRequest extends SessionRequest {
  body: unknown;
}

type Handler = (s: DashboardSession, request: Request) => Promise<Response> | Response;

/** Runs `h` with the signed-in session (the `ct_session` cookie); otherwise redirects to sign-in, remembering the page. */
export async function withSession(rd: RouteDeps, { request, cookie }: SessionRequest, h: Handler): Promise<Response> {
  const s = await resolveSession(rd.deps.db, rd.deps.clock, cookieText(cookie, SESSION_COOKIE));
  if (!s) {
    const path = new URL(request.url).pathname;
    return redirect(
      `/dashboard/sign-in${request.method === "GET" && path !== "/dashboard" ? `?next=${encodeURIComponent(path)}` : ""}`,
    );
  }
  return h(s, request);
}

/** True when the browser says the form came from another site (Fetch Metadata). */
export const crossSite = (r: Request) => r.headers.get("sec-fetch-site") === "cross-site";

/** The 403 page for a missing, wrong or stale CSRF token. */
export const csrfRefused = (s?: PageSession) =>
  htmlResponse(
    messagePage(
      "Form expired",
      "This form could not be accepted: it is stale or did not come from this dashboard. Go back, reload the page and try again.",
      s,
    ),
    403,
  );

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** The anonymous forms' double-submit CSRF token: the `ct_csrf` cookie's when well shaped, else a new one set. */
export function preCsrf(cookie: CookieJar): string {
  const cur = cookieText(cookie, PRE_CSRF_COOKIE);
  if (cur && TOKEN_SHAPE.test(cur)) return cur;
  const token = randomToken();
  putCookie(cookie, PRE_CSRF_COOKIE, token);
  return token;
}

/** True when a same-site anonymous form's `_csrf` equals a well-shaped `ct_csrf` cookie (constant time). */
export function preCsrfOk({ request, cookie }: SessionRequest, form: FormBody): boolean {
  const token = cookieText(cookie, PRE_CSRF_COOKIE);
  return !crossSite(request) && token !== undefined && TOKEN_SHAPE.test(token) && safeEqual(str(form, "_csrf"), token);
}

/** For POST forms of a signed-in user: session, then `_csrf` must equal the session's token (constant time). */
export function withForm(
  rd: RouteDeps,
  ctx: FormRequest,
  h: (s: DashboardSession, form: FormBody) => Promise<Response> | Response,
): Promise<Response> {
  const { request } = ctx;
  const form = ctx.body as FormBody; // the dashboard's onParse (parseForm) produced it
  return withSession(rd, ctx, (s) => {
    if (crossSite(request) || !safeEqual(str(form, "_csrf"), s.csrfToken)) return csrfRefused(pageSession(s));
    return h(s, form);
  });
}
