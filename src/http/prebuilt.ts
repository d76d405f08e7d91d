/** Answering a pre-serialised body without Elysia copying it (docs/performance.md#decisions). */

/** The part of Elysia's `set` this needs: the headers the hooks set for the response. */
export interface SetHeaders {
  headers: Record<string, unknown>;
}

/**
 * `200` with `text` (already serialised) and `contentType`, carrying the headers the hooks put in `set.headers`
 * (which is left empty, so Elysia adds none twice). Elysia skips a route's response schema for a Response: the
 * caller's body must already match it (the contract tests check every documented answer).
 */
export function prebuiltResponse(set: SetHeaders, text: string, contentType: string): Response {
  const headers = set.headers as Record<string, string>;
  headers["content-type"] = contentType;
  set.headers = Object.create(null) as Record<string, unknown>;
  return new Response(text, { headers });
}

/**
 * A route handler answering {@link prebuiltResponse} with `body` (or what it returns), written out: Elysia reads
 * a handler with `return f(` in its source as asynchronous (src/http/elysia-quirks.ts), and Bun's transpiler
 * folds a `const r = f(); return r` into one.
 */
export function prebuiltHandler(
  body: string | (() => string),
  contentType: string,
): (c: { set: SetHeaders }) => Response {
  return function prebuilt({ set }) {
    const text = typeof body === "string" ? body : body();
    const headers = set.headers as Record<string, string>;
    headers["content-type"] = contentType;
    set.headers = Object.create(null) as Record<string, unknown>;
    return new Response(text, { headers });
  };
}
