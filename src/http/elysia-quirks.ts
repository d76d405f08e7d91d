/** The Elysia workarounds (elysia#2005; docs/performance.md#decisions); delete each when its test fails. */
import type { PreContext, PreHandler } from "elysia";

/**
 * An `onRequest` hook that Elysia calls without awaiting, whatever its source: registered with `isAsync` and
 * `hasReturn` already set, the fields Elysia memoises its reading in. Name the context fields `fn` reads.
 */
export function syncRequestHook(fn: (context: PreContext) => Response | Promise<Response> | undefined): PreHandler {
  return { fn, isAsync: false, hasReturn: true } as unknown as PreHandler;
}

/**
 * A {@link syncRequestHook} that may have to wait before it decides (a key not in the cache). Elysia awaits a
 * request hook on every request or on none, and takes a hook's promise as the answer, so a wait cannot resume the
 * request: when `fn` returns a promise, the request is dispatched anew through `again` (the app's `fetch`) once it
 * settles, and `fn` must then decide at once from what its wait noted. The first pass's `set` headers are dropped
 * (the second pass sets its own). Other requests stay synchronous. `fn` gets only the request and `set`.
 */
export function requestHookThatMayWait(
  fn: (request: Request, set: PreContext["set"]) => Promise<void> | undefined,
  again: (request: Request) => Response | Promise<Response>,
): PreHandler {
  // Destructured: Elysia reads which context fields a hook names (a whole context would parse every body).
  return syncRequestHook(function mayWait({ request, set }) {
    const wait = fn(request, set);
    if (wait === undefined) return undefined;
    set.headers = {};
    return wait.then(() => again(request));
  });
}
