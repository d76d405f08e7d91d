/** Cross-cutting HTTP behaviour applied once at the root (docs/hostile-input.md). */
import { Elysia } from "elysia";
import { AppError, errorBody, RequestValidationError, type ErrorBody } from "../lib/errors.ts";
import { newId } from "../lib/ids.ts";
import { jsonResponse } from "../lib/json.ts";
import type { Logger } from "../lib/log.ts";
import { isProbeRequest } from "../modules/health/state.ts";
import { JsonInvalid, MAX_BODY_BYTES, payloadTooLarge } from "./body.ts";
import { syncRequestHook } from "./elysia-quirks.ts";
import { httpScope } from "./scope.ts";
import { toValidationItems } from "./validation.ts";

export { MAX_BODY_BYTES } from "./body.ts";

/** Codes meaning the database is unreachable or late (ANSWER/QUEUE_TIMEOUT, DEADLINE_EXCEEDED: our postgres-js patch). */
const DB_DOWN = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "ANSWER_TIMEOUT",
  "QUEUE_TIMEOUT",
  "DEADLINE_EXCEEDED",
  "57014",
  "57P01",
  "57P02",
  "57P03",
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
  "53300",
]);

export function isDatabaseUnavailable(err: unknown): boolean {
  return databaseDownCode(err) !== undefined;
}

/** The code in `err` or its causes that says the database is unreachable or late, if any (logged with the 503). */
function databaseDownCode(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++)
    if (typeof e.code === "string" && DB_DOWN.has(e.code)) return e.code;
  return undefined;
}

/** Headers on every response: HSTS (spec: Conventions, HTTPS only) and nosniff. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "strict-transport-security": "max-age=31536000",
  "x-content-type-options": "nosniff",
});

/** A client-sent `X-Request-Id` kept as ours: short, printable, no spaces (safe to log and echo). */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A new request's id: the client's own when well formed, else a new `req_…` id (chosen once, by the access log). */
export function newRequestId(request: Request): string {
  const sent = request.headers.get("x-request-id");
  return sent !== null && CLIENT_REQUEST_ID.test(sent) ? sent : newId("req");
}

/** The running request's id: its scope's (src/http/scope.ts); outside one (a bare Elysia app in a test), a new one. */
const requestIdFor = (request: Request): string => httpScope()?.id ?? newRequestId(request);

/** The path of an absolute request URL (`http://host/v1/x?q` → `/v1/x`), by string search: no URL parse per request. */
export function pathOf(url: string): string {
  const at = url.indexOf("/", url.indexOf("://") + 3);
  if (at === -1) return "/";
  const q = url.indexOf("?", at);
  return q === -1 ? url.slice(at) : url.slice(at, q);
}

/** The URL's path for logs; never throws (a malformed URL is logged as such). */
export function safePathname(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return "(malformed URL)";
  }
}

const isDashboard = (path: string) => path === "/dashboard" || path.startsWith("/dashboard/");

const json = jsonResponse;

const internalError = (rid: string): ErrorBody =>
  errorBody("INTERNAL_ERROR", `Unexpected error; quote request id ${rid} to support.`);

export interface CoreOptions {
  log: Logger;
  trustProxy: number | undefined;
}

export function corePlugin(opts: CoreOptions) {
  const { log } = opts;
  return new Elysia({ name: "core" })
    .onRequest(
      syncRequestHook(function coreDoor({ request, set }) {
        const rid = requestIdFor(request);
        const headers = set.headers;
        headers["strict-transport-security"] = SECURITY_HEADERS["strict-transport-security"];
        headers["x-content-type-options"] = SECURITY_HEADERS["x-content-type-options"];
        headers["x-request-id"] = rid;
        return refusedAtTheDoor(request, rid, opts.trustProxy);
      }),
    )
    .onError({ as: "global" }, ({ code, error, set, request }) => {
      // Dashboard pages render their own failures as HTML (the dashboard module's onError, which runs after this one).
      if (URL.canParse(request.url) && isDashboard(pathOf(request.url))) return;
      const rid = String(set.headers["x-request-id"] ?? newId("req"));
      try {
        return renderError(code, error, rid, set.headers, request, log);
      } catch {
        // Rendering must never fail into Bun's own error page.
        return json(500, internalError(rid), { "x-request-id": rid });
      }
    });
}

/** The answer to a request refused before routing (400 bad Host/URL or HTTPS_REQUIRED, 413), or undefined. */
function refusedAtTheDoor(request: Request, rid: string, trustProxy: number | undefined): Response | undefined {
  // Bun hands over a bare path or an unparseable URL when the Host header is not a host.
  if (!URL.canParse(request.url))
    return json(400, errorBody("BAD_REQUEST", "The Host header or the request URL is malformed."), {
      ...SECURITY_HEADERS,
      "x-request-id": rid,
      connection: "close",
    });
  if (trustProxy !== undefined && !isProbeRequest(request.url)) {
    const proto = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
    if (proto !== "https")
      return json(
        400,
        errorBody("HTTPS_REQUIRED", "This API is served over HTTPS only; repeat the request with https://."),
        { "x-request-id": rid },
      );
  }
  // The dashboard reads its own form bodies and answers an oversize form with its own HTML page.
  const len = request.headers.get("content-length");
  if (len && Number(len) > MAX_BODY_BYTES && !isDashboard(pathOf(request.url))) {
    const e = payloadTooLarge();
    return json(e.status, errorBody(e.code, e.message), { "x-request-id": rid, connection: "close" });
  }
  return undefined;
}

/** The documented response for a failure (spec: Errors; 422 body: spec "Validation error"). */
function renderError(
  code: unknown,
  thrown: unknown,
  rid: string,
  setHeaders: Record<string, unknown>,
  request: Request,
  log: Logger,
): Response {
  // Elysia wraps whatever a parser throws in a ParseError; unwrap ours.
  const cause = (thrown as { cause?: unknown })?.cause;
  const error = code === "PARSE" && (cause instanceof AppError || cause instanceof JsonInvalid) ? cause : thrown;
  const headers: Record<string, string> = { "x-request-id": rid };
  for (const [k, v] of Object.entries(setHeaders)) if (k.startsWith("ratelimit-")) headers[k] = String(v);
  if (error instanceof AppError) {
    // The rest of the body was never read: the connection cannot carry another request.
    if (error.code === "PAYLOAD_TOO_LARGE" || error.code === "REQUEST_TIMEOUT") headers.connection = "close";
    return json(error.status, errorBody(error.code, error.message, error.extra), { ...headers, ...error.headers });
  }
  if (error instanceof RequestValidationError) return json(422, { detail: error.items }, headers);
  if (error instanceof JsonInvalid)
    return json(422, { detail: [{ loc: ["body"], msg: error.msg, type: "json_invalid" }] }, headers);
  if (code === "PARSE")
    return json(422, { detail: [{ loc: ["body"], msg: "Invalid JSON", type: "json_invalid" }] }, headers);
  if (code === "VALIDATION") {
    const v = error as { type: string; all: Parameters<typeof toValidationItems>[1] };
    if (v.type === "response") {
      log.error("response failed its own schema", {
        request_id: rid,
        path: safePathname(request.url),
        detail: v.all.slice(0, 3).map((e) => e.path),
      });
      return json(500, internalError(rid), headers);
    }
    return json(422, { detail: toValidationItems(v.type, v.all) }, headers);
  }
  if (code === "NOT_FOUND")
    return json(404, errorBody("NOT_FOUND", "No such endpoint. The API reference is at /docs."), headers);
  if (isDatabaseUnavailable(error)) {
    log.warn("database unavailable", { request_id: rid, code: databaseDownCode(error) });
    return json(503, errorBody("SERVICE_UNAVAILABLE", "The service is temporarily unavailable; retry shortly."), {
      ...headers,
      "retry-after": "5",
    });
  }
  // Drizzle's own message quotes the SQL and its parameters; log the driver's cause instead.
  const e = error as Error & { cause?: Error };
  const detail =
    (e?.name === "DrizzleQueryError" || String(e?.message).startsWith("Failed query")) && e.cause ? e.cause : e;
  log.error("unhandled error", {
    request_id: rid,
    path: safePathname(request.url),
    error: detail?.name,
    message: String(detail?.message).slice(0, 300),
  });
  return json(500, internalError(rid), headers);
}
