/**
 * One HTTP exchange of a delivery hop on undici's dispatch API, on the pinned agent: status, `Location` and at most
 * `cap` body bytes are kept, the rest never read. Why not `undici.request`: docs/webhooks.md#delivery.
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
  cap: number;
}

/** The hop's budget ran out. */
class TimeoutError extends Error {
  override name = "TimeoutError";
}

/** Stops reading once the snippet is full (the connection is closed rather than drained). */
class SnippetFull extends Error {}

/** Runs one exchange; never rejects: the status, `Location` and snippet, or the error that came before a status. */
export function exchange(dispatcher: undici.Dispatcher, req: ExchangeRequest): Promise<ExchangeResult> {
  return new Promise((resolve) => {
    const x = new Exchange(req, resolve);
    try {
      dispatcher.dispatch(
        {
          origin: req.url.origin,
          path: req.url.pathname + req.url.search,
          method: req.method,
          headers: req.headers,
          body: req.body,
        },
        x,
      );
    } catch (e) {
      x.settle({ error: e, timedOut: false });
    }
  });
}

type ResponseHeaders = Parameters<NonNullable<undici.Dispatcher.DispatchHandler["onResponseStart"]>>[2];

/** The dispatch handler of one exchange: one object, state in fields (closures cost more per delivery). */
class Exchange implements undici.Dispatcher.DispatchHandler {
  private controller: undici.Dispatcher.DispatchController | null = null;
  private reason: Error | null = null;
  private status = 0;
  private location: string | undefined;
  private chunks: Buffer[] = [];
  private read = 0;
  private settled = false;
  private readonly timer: ReturnType<typeof setTimeout>;

  constructor(
    private readonly req: ExchangeRequest,
    private readonly resolve: (r: ExchangeResult) => void,
  ) {
    this.timer = setTimeout(() => this.timedOut(), req.timeoutMs);
  }

  settle(r: ExchangeResult): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(r);
  }

  private answered(): void {
    const { chunks, req } = this;
    const [only] = chunks;
    const snippet =
      only === undefined
        ? ""
        : chunks.length === 1
          ? only.toString("utf8", 0, Math.min(req.cap, only.length))
          : Buffer.concat(chunks).subarray(0, req.cap).toString("utf8");
    this.settle({ statusCode: this.status, location: this.location, snippet });
  }

  private stop(e: Error): void {
    this.reason = e;
    this.controller?.abort(e);
  }

  private timedOut(): void {
    this.stop(new TimeoutError());
    // Still queued for a connection or connecting: the answer is not waited for.
    if (this.status === 0) this.settle({ error: this.reason, timedOut: true });
    else this.answered();
  }

  onRequestStart(c: undici.Dispatcher.DispatchController): void {
    this.controller = c;
    if (this.reason) c.abort(this.reason);
  }

  onResponseStart(_c: undici.Dispatcher.DispatchController, statusCode: number, headers: ResponseHeaders): void {
    if (statusCode < 200) return; // 1xx: the real answer follows
    this.status = statusCode;
    const loc = headers.location;
    this.location = Array.isArray(loc) ? loc[0] : loc;
  }

  onResponseData(_c: undici.Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.chunks.push(chunk);
    this.read += chunk.length;
    if (this.read >= this.req.cap) {
      this.answered();
      this.stop(new SnippetFull());
    }
  }

  onResponseEnd(): void {
    this.answered();
  }

  onResponseError(_c: undici.Dispatcher.DispatchController, err: Error): void {
    if (this.status !== 0) this.answered();
    else this.settle({ error: err, timedOut: this.reason instanceof TimeoutError });
  }
}
