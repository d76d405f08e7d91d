/**
 * Outbound HTTP to courier backends, one client per courier (CONTRACT 4:
 * "Each courier has its own connection pool, timeout and concurrency cap, so
 * one slow courier cannot starve the others").
 *
 * Real undici, imported by file (`undici/index.js`): the bare `undici` import
 * is Bun's shim, which ignores dispatcher options (STYLE, Bun facts).
 *
 * Every network failure becomes a {@link CourierError}: a timeout → `timeout`,
 * a reset, refused connection, TLS failure, oversized or truncated body →
 * `backend`. Redirects are not followed (a courier API that redirects is
 * misconfigured, and following could leak credentials to another host).
 */
import * as undici from "undici/index.js";
import { CourierError } from "./adapters/types.ts";

/** Largest courier response read (bytes); larger ones are a backend error, never buffered whole. */
export const MAX_COURIER_BODY = 4 * 1024 * 1024;

export interface CourierRequest {
  method?: "GET" | "POST";
  /** Path (and query) appended to the base URL, e.g. `/api/v1/packages/json/?waybill=…`. */
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export interface CourierResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
}

export interface CourierHttp {
  readonly baseUrl: string;
  /** @throws CourierError (timeout | backend) on network failure; any HTTP status is returned, not thrown. */
  request(req: CourierRequest): Promise<CourierResponse>;
  close(): Promise<void>;
}

export interface CourierHttpOptions {
  baseUrl: string;
  /** Per request: connect + headers + body, in ms. */
  timeoutMs: number;
  /** Connections per origin (the pool size). */
  connections: number;
}

export function createCourierHttp(opts: CourierHttpOptions): CourierHttp {
  const base = opts.baseUrl.replace(/\/+$/, "");
  const agent = new undici.Agent({
    connections: opts.connections,
    connect: { timeout: opts.timeoutMs },
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    keepAliveTimeout: 10_000,
  });
  return {
    baseUrl: base,
    async request(req) {
      const url = new URL(base + req.path);
      for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
      const timeout = AbortSignal.timeout(opts.timeoutMs);
      const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
      try {
        const res = await undici.request(url, {
          method: req.method ?? "GET",
          headers: req.headers,
          body: req.body,
          dispatcher: agent,
          signal,
        });
        const text = await readCapped(res.body, MAX_COURIER_BODY);
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : String(v);
        return { status: res.statusCode, headers, text };
      } catch (err) {
        throw classifyNetworkError(err, signal);
      }
    },
    close: () => agent.close(),
  };
}

async function readCapped(body: AsyncIterable<Uint8Array> & { destroy?: (e?: Error) => void }, cap: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > cap) {
      body.destroy?.();
      throw new CourierError("backend", `courier response larger than ${cap} bytes`);
    }
    chunks.push(chunk);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

function classifyNetworkError(err: unknown, signal: AbortSignal): CourierError {
  if (err instanceof CourierError) return err;
  const e = err as { name?: string; code?: string; message?: string };
  if (signal.aborted || e.name === "AbortError" || e.name === "TimeoutError" || /TIMEOUT/.test(e.code ?? ""))
    return new CourierError("timeout", "courier backend did not answer in time");
  const what = e.code ?? e.name ?? "network error";
  return new CourierError("backend", `courier backend unreachable (${what})`);
}
