/** The one Elysia workaround (elysia#2005; docs/performance.md#decisions); delete when its test fails. */
import type { PreContext, PreHandler } from "elysia";

/**
 * An `onRequest` hook that Elysia calls without awaiting, whatever its source: registered with `isAsync` and
 * `hasReturn` already set, the fields Elysia memoises its reading in. Name the context fields `fn` reads.
 */
export function syncRequestHook(
  fn: (context: PreContext) => Response | Promise<Response> | undefined | void,
): PreHandler {
  return { fn, isAsync: false, hasReturn: true } as unknown as PreHandler;
}
