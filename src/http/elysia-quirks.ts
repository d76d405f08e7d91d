/**
 * The one place that works around an Elysia behaviour: Elysia 1.4 decides whether to await a hook by reading its
 * source text (upstream: https://github.com/elysiajs/elysia/issues/2005), which makes every request async.
 * test/http/elysia-quirks.test.ts fails the day upstream stops; then delete this file.
 */
import type { PreContext, PreHandler } from "elysia";

/**
 * An `onRequest` hook that Elysia calls without awaiting, whatever its source: registered with `isAsync` and
 * `hasReturn` already set, the fields Elysia memoises its reading in. Name the context fields `fn` reads.
 */
export function syncRequestHook(fn: (context: PreContext) => Response | Promise<Response> | undefined | void): PreHandler {
  return { fn, isAsync: false, hasReturn: true } as unknown as PreHandler;
}
