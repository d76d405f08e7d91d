/**
 * The one place that works around an Elysia behaviour. Elysia 1.4 decides whether to `await` a lifecycle hook by
 * reading the hook's source text (`isAsync` in elysia/src/compose.ts): the words "async"/"await", or any
 * `return f(` / `=> f(`, make it await the hook, and one such `onRequest` hook makes every request's entry point
 * async (a promise and a microtask per request). Upstream: https://github.com/elysiajs/elysia/issues/2005.
 * test/http/elysia-quirks.test.ts fails the day upstream stops reading source text; then delete this file.
 */
import type { PreContext, PreHandler } from "elysia";

/**
 * An `onRequest` hook that Elysia calls without awaiting, whatever its source looks like. It may return a
 * Response, undefined, or a Promise of a Response (Elysia's early-response mapping then returns that promise
 * for this request only). Registered as a hook container whose `isAsync` and `hasReturn` are already set:
 * those are the fields Elysia memoises its reading of the source in, so it reads them instead of the text.
 * Elysia still analyses `fn`'s parameters to learn which context fields it uses: name the fields it reads.
 */
export function syncRequestHook(fn: (context: PreContext) => Response | Promise<Response> | undefined | void): PreHandler {
  return { fn, isAsync: false, hasReturn: true } as unknown as PreHandler;
}
