/**
 * Cross-cutting HTTP behaviour, applied once at the root (global scope):
 *
 * - `X-Request-Id` on every response (CONTRACT 3);
 * - HTTPS only behind a proxy: `TRUST_PROXY` mode refuses requests whose
 *   `X-Forwarded-Proto` is not `https` (CONTRACT 8, 400 HTTPS_REQUIRED);
 * - request bodies: at most 64 KiB (413 PAYLOAD_TOO_LARGE), parsed as JSON
 *   whatever the content type (curl's `-d` sends form encoding by default),
 *   invalid JSON → 422 `json_invalid`;
 * - one `onError` rendering every failure as a documented shape: the error
 *   envelope, or the 422 `{detail}` body. Never Elysia's default body, never
 *   a stack trace, SQL or secret.
 */
import { Elysia } from "elysia";
import { AppError, errorBody, RequestValidationError, type ErrorCode } from "../errors.ts";
import { newId } from "../lib/ids.ts";
import type { Logger } from "../lib/log.ts";
import { toValidationItems } from "./validation.ts";

export const MAX_BODY_BYTES = 64 * 1024;

/** postgres-js / network error codes that mean "the database is not reachable right now". */
const DB_DOWN = new Set([
  "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "CONNECT_TIMEOUT", "CONNECTION_CLOSED", "CONNECTION_ENDED",
  "CONNECTION_DESTROYED", "57P01", "57P02", "57P03", "08000", "08001", "08003", "08004", "08006", "53300",
]);

/** True when `err` (or its cause chain) is a database connectivity failure. */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++)
    if (typeof e.code === "string" && DB_DOWN.has(e.code)) return true;
  return false;
}

class JsonInvalid extends Error {}

function json(status: number, body: unknown, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

export interface CoreOptions {
  log: Logger;
  trustProxy: number | undefined;
}

export function corePlugin(opts: CoreOptions) {
  const { log } = opts;
  return new Elysia({ name: "core" })
    .onRequest(({ request, set }) => {
      const rid = newId("req");
      set.headers["x-request-id"] = rid;
      // HTTPS only (spec: Conventions): browsers that reached us once never try plain HTTP again.
      set.headers["strict-transport-security"] = "max-age=31536000";
      if (opts.trustProxy !== undefined) {
        const proto = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
        if (proto !== "https")
          return json(400, errorBody("HTTPS_REQUIRED", "This API is served over HTTPS only; repeat the request with https://."), { "x-request-id": rid });
      }
      const len = request.headers.get("content-length");
      if (len && Number(len) > MAX_BODY_BYTES)
        return json(413, errorBody("PAYLOAD_TOO_LARGE", `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`), { "x-request-id": rid, connection: "close" });
    })
    .onParse({ as: "global" }, async ({ request }) => {
      const buf = await request.arrayBuffer();
      if (buf.byteLength > MAX_BODY_BYTES) throw new AppError("PAYLOAD_TOO_LARGE", `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`);
      const text = new TextDecoder().decode(buf);
      if (text.trim() === "") return undefined;
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new JsonInvalid();
      }
    })
    .onError({ as: "global" }, ({ code, error: thrown, set, request }) => {
      // Elysia wraps whatever a parser throws in a ParseError; unwrap ours.
      const cause = (thrown as { cause?: unknown }).cause;
      const error = code === "PARSE" && (cause instanceof AppError || cause instanceof JsonInvalid) ? cause : thrown;
      const rid = String(set.headers["x-request-id"] ?? newId("req"));
      const headers: Record<string, string> = { "x-request-id": rid };
      for (const [k, v] of Object.entries(set.headers)) if (k.startsWith("ratelimit-")) headers[k] = String(v);
      if (error instanceof AppError) return json(error.status, errorBody(error.code, error.message, error.extra), { ...headers, ...error.headers });
      if (error instanceof RequestValidationError) return json(422, { detail: error.items }, headers);
      if (error instanceof JsonInvalid || code === "PARSE")
        return json(422, { detail: [{ loc: ["body"], msg: "Invalid JSON", type: "json_invalid" }] }, headers);
      if (code === "VALIDATION") {
        const v = error as unknown as { type: string; all: Parameters<typeof toValidationItems>[1] };
        if (v.type === "response") {
          log.error("response failed its own schema", { request_id: rid, path: new URL(request.url).pathname, detail: v.all.slice(0, 3).map((e) => e.path) });
          return json(500, errorBody("INTERNAL_ERROR", `Unexpected error; quote request id ${rid} to support.`), headers);
        }
        return json(422, { detail: toValidationItems(v.type, v.all) }, headers);
      }
      if (code === "NOT_FOUND") return json(404, errorBody("NOT_FOUND", "No such endpoint. The API reference is at /docs."), headers);
      if (isDatabaseUnavailable(error)) {
        log.warn("database unavailable", { request_id: rid, code: (error as { code?: string }).code });
        return json(503, errorBody("SERVICE_UNAVAILABLE", "The service is temporarily unavailable; retry shortly."), { ...headers, "retry-after": "5" });
      }
      // Drizzle's own message quotes the SQL and its parameters; log the driver's cause instead.
      const e = error as Error & { cause?: Error };
      const detail = (e?.name === "DrizzleQueryError" || String(e?.message).startsWith("Failed query")) && e.cause ? e.cause : e;
      log.error("unhandled error", { request_id: rid, path: new URL(request.url).pathname, error: detail?.name, message: String(detail?.message).slice(0, 300) });
      const internal: ErrorCode = "INTERNAL_ERROR";
      return json(500, errorBody(internal, `Unexpected error; quote request id ${rid} to support.`), headers);
    });
}
