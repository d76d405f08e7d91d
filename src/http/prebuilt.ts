/**
 * Answering a body serialised once (the courier catalogue) without Elysia
 * copying it on every request.
 *
 * Elysia passes a returned `Response` through untouched only when the hooks
 * left no headers in `set.headers`; ours always leave some (the security
 * headers and request id of core.ts, `RateLimit-*` of auth.ts), and then it
 * builds a new Headers and a new Response that re-reads the body as a stream
 * (~3 µs a request, `bun run bench` P1). {@link prebuiltHandler} moves those
 * headers into the Response itself, so the answer carries exactly the headers
 * it would have carried, and Elysia returns it as is.
 */

/** The part of Elysia's `set` this needs: the headers the hooks set for the response. */
export interface SetHeaders {
  headers: Record<string, unknown>;
}

/**
 * A route handler answering `200` with `body` (already serialised) and `contentType`, carrying every header
 * the hooks put in `set.headers`, which is left empty. The hooks' object itself becomes the Response's
 * header list (their values are strings) and `set.headers` a new empty object: no copy, no per-key delete.
 * Written so that Elysia reads it as synchronous (no `return f(` in it; see auth.ts): the route's compiled
 * handler then awaits nothing.
 */
export function prebuiltHandler(body: string | (() => string), contentType: string): (c: { set: SetHeaders }) => Response {
  return function prebuilt({ set }) {
    const text = typeof body === "string" ? body : body();
    const headers = set.headers as Record<string, string>;
    headers["content-type"] = contentType;
    set.headers = Object.create(null) as Record<string, unknown>;
    return new Response(text, { headers });
  };
}
