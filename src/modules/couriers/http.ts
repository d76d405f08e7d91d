/**
 * Outbound HTTP to courier backends, one client per courier so one slow courier cannot starve the others
 * (docs/spec-map.md, "Decisions", concurrent lookups), on Bun's `fetch` (why: docs/performance.md#decisions).
 * Every network failure becomes a {@link CourierError} (`timeout` or `backend`); redirects are not followed
 * (they could leak credentials to another host).
 */
import { CourierError, type CourierHttp } from "./adapters/types.ts";

/** Largest courier response read (bytes); larger ones are a backend error, never buffered whole. */
export const MAX_COURIER_BODY = 4 * 1024 * 1024;

export interface CourierHttpOptions {
  baseUrl: string;
  /** Per request: connect + headers + body, in ms. */
  timeoutMs: number;
  /** Requests in flight at once (the registry's per-courier limiter enforces it). */
  connections?: number;
}

export function createCourierHttp(opts: CourierHttpOptions): CourierHttp {
  const base = opts.baseUrl.replace(/\/+$/, "");
  return {
    baseUrl: base,
    async request(req) {
      const url = new URL(base + req.path);
      for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
      const timeout = expiringSignal(opts.timeoutMs);
      const signal = req.signal ? AbortSignal.any([req.signal, timeout.signal]) : timeout.signal;
      try {
        const res = await fetch(url, {
          method: req.method ?? "GET",
          headers: req.headers,
          body: req.body,
          redirect: "manual",
          signal,
        });
        const text = await readCapped(res, MAX_COURIER_BODY);
        const headers: Record<string, string> = {};
        res.headers.forEach((v, k) => {
          headers[k] = v;
        });
        return { status: res.status, headers, text };
      } catch (err) {
        throw classifyNetworkError(err, signal);
      } finally {
        timeout.clear();
      }
    },
    // Connections belong to the runtime's per-origin pool and close when idle.
    close: async () => {},
  };
}

/**
 * A signal that aborts with a `TimeoutError` after `ms` ms, and a `clear()` that drops its timer at once
 * (`AbortSignal.timeout` keeps spent timers alive for the full `ms`: docs/performance.md, P5).
 */
export function expiringSignal(ms: number): { signal: AbortSignal; clear(): void } {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(new DOMException("The operation timed out.", "TimeoutError")), ms);
  return { signal: ctl.signal, clear: () => clearTimeout(timer) };
}

/** Reads at most `cap` bytes of the body; a longer body is a backend error and the rest is never read. */
async function readCapped(res: Response, cap: number): Promise<string> {
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (declared > cap) {
    await res.body?.cancel();
    throw new CourierError("backend", `courier response larger than ${cap} bytes`);
  }
  if (!res.body) return "";
  // A declared length bounds an uncompressed body; a compressed one may inflate past the cap, so it is counted.
  const encoding = res.headers.get("content-encoding");
  if (declared <= cap && (!encoding || encoding === "identity")) return res.text();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > cap) {
      await res.body.cancel().catch(() => {});
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
