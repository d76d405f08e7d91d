/**
 * Shared pieces of the courier adapter tests: the newest checkpoint, the
 * error kind of a parse, and a loopback "courier" that records every request
 * an adapter makes (method, path, query, headers, body) and answers it.
 * NETWORK SAFETY: 127.0.0.1 only.
 */
import type { AdapterContext, CourierAdapter } from "../../src/modules/couriers/adapters/types.ts";
import type { RawCheckpoint } from "../../src/domain/checkpoint.ts";
import { CourierError } from "../../src/modules/couriers/adapters/types.ts";
import { courierBySlug } from "../../src/modules/couriers/catalogue.ts";
import { createCourierHttp } from "../../src/modules/couriers/http.ts";

/** The newest checkpoint by UTC instant. */
export const newest = <T extends Pick<RawCheckpoint, "at">>(cps: T[]): T =>
  [...cps].sort((a, b) => (a.at < b.at ? 1 : -1))[0]!;

/** `"ok"`, or the CourierError kind `f` throws (anything else is reported as a crash). */
export function kindOf(f: () => unknown): string {
  try {
    f();
    return "ok";
  } catch (e) {
    return e instanceof CourierError ? e.kind : `crash: ${(e as Error).message}`;
  }
}

/** One request the adapter sent. */
export interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  body: string;
}

/** Answers request number `i` (0-based); `req` is unread (the recorded body came from a clone). */
export type Reply = (seen: Seen, i: number, req: Request) => Response | Promise<Response>;

/**
 * A loopback server standing in for courier `slug`, and an adapter context
 * pointed at it (`basePath` appended to the base URL, as a real base URL
 * often carries one).
 */
export function courierLoopback(slug: string, credentials: Record<string, string>, reply: Reply, basePath = "") {
  const seen: Seen[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const s = {
        method: req.method,
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: await req.clone().text(),
      };
      seen.push(s);
      return reply(s, seen.length - 1, req);
    },
  });
  const http = createCourierHttp({
    baseUrl: `http://127.0.0.1:${server.port}${basePath}`,
    timeoutMs: 2000,
    connections: 2,
  });
  const ctx: AdapterContext = {
    courier: courierBySlug(slug)!,
    http,
    credentials,
    signal: AbortSignal.timeout(5000),
    now: () => Date.now(),
    sleep: (ms) => Bun.sleep(ms),
  };
  return { seen, ctx, close: async () => (await http.close(), await server.stop(true)) };
}

/** Runs one lookup against a {@link courierLoopback}: the requests seen, and the snapshot or the error. */
export async function captureTrack(
  adapter: CourierAdapter,
  awb: string,
  credentials: Record<string, string>,
  reply: Reply,
  basePath = "",
): Promise<{ seen: Seen[]; result: unknown }> {
  const lb = courierLoopback(adapter.id, credentials, reply, basePath);
  try {
    const result = await adapter.track(awb, lb.ctx).then(
      (r) => r,
      (e: unknown) => e,
    );
    return { seen: lb.seen, result };
  } finally {
    await lb.close();
  }
}
