/**
 * One HTTP exchange of a delivery hop on undici's dispatch API (docs/spec-map.md, "Decisions", delivery
 * transport): the request goes out on the pinned agent, the status and `Location` are kept, at most
 * `cap` bytes of the body are kept for the attempt log and the rest is never read.
 *
 * Why not `undici.request`: that wraps every response in a Readable stream, an async resource and an
 * abort-signal listener, which cost more than the exchange itself at thousands of deliveries a
 * second (bench/deliver.ts). Here the hop's one timer aborts the request through the dispatch
 * controller, so the whole hop, from the queue for a connection to the last byte kept, has one budget.
 */
import type * as undici from "undici/index.js";

/** What one exchange produced: a status (and what was read of the body) or the error before one. */
export type ExchangeResult =
  | { statusCode: number; location: string | undefined; snippet: string; error?: undefined; timedOut?: undefined }
  | { statusCode?: undefined; error: unknown; timedOut: boolean };

export interface ExchangeRequest {
  url: URL;
  method: "POST" | "GET";
  headers: Record<string, string>;
  body: Uint8Array | null;
  /** Budget of the whole exchange, ms. */
  timeoutMs: number;
  /** Body bytes kept at most. */
  cap: number;
}

/** The hop's budget ran out. */
export class TimeoutError extends Error {
  override name = "TimeoutError";
}

/** Stops reading once the snippet is full (the connection is closed rather than drained). */
class SnippetFull extends Error {}

/**
 * Runs one exchange through `dispatcher`. Resolves (never rejects) with the status, the first
 * `Location` and the snippet (UTF-8, at most `cap` bytes) — an error after the status line (reset,
 * timeout mid-body) keeps the status and what was read — or with the error that came before a status.
 */
export function exchange(dispatcher: undici.Dispatcher, req: ExchangeRequest): Promise<ExchangeResult> {
  return new Promise((resolve) => {
    let controller: undici.Dispatcher.DispatchController | null = null;
    let reason: Error | null = null;
    let status = 0;
    let location: string | undefined;
    const chunks: Buffer[] = [];
    let read = 0;
    let settled = false;
    const settle = (r: ExchangeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const answered = () => settle({ statusCode: status, location, snippet: Buffer.concat(chunks).subarray(0, req.cap).toString("utf8") });
    const stop = (e: Error) => {
      reason = e;
      controller?.abort(e);
    };
    const timer = setTimeout(() => {
      stop(new TimeoutError());
      // Still queued for a connection or connecting: the answer is not waited for.
      if (status === 0) settle({ error: reason, timedOut: true });
      else answered();
    }, req.timeoutMs);
    const handler: undici.Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (reason) c.abort(reason);
      },
      onResponseStart(_c, statusCode, headers) {
        if (statusCode < 200) return; // 1xx: the real answer follows
        status = statusCode;
        const loc = (headers as Record<string, string | string[] | undefined>).location;
        location = Array.isArray(loc) ? loc[0] : loc;
      },
      onResponseData(_c, chunk) {
        if (settled) return;
        chunks.push(chunk);
        read += chunk.length;
        if (read >= req.cap) {
          answered();
          stop(new SnippetFull());
        }
      },
      onResponseEnd() {
        answered();
      },
      onResponseError(_c, err) {
        if (status !== 0) answered();
        else settle({ error: err, timedOut: reason instanceof TimeoutError });
      },
    };
    try {
      dispatcher.dispatch(
        { origin: req.url.origin, path: req.url.pathname + req.url.search, method: req.method, headers: req.headers, body: req.body },
        handler,
      );
    } catch (e) {
      settle({ error: e, timedOut: false });
    }
  });
}
