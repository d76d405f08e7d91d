/** Answering a pre-serialised body without Elysia copying it (docs/performance.md#decisions). */

/** The part of Elysia's `set` this needs: the headers the hooks set for the response. */
export interface SetHeaders {
  headers: Record<string, unknown>;
}

/**
 * A route handler answering `200` with `body` (already serialised) and `contentType`, carrying the headers the hooks
 * put in `set.headers` (which is left empty). No `return f(` in it, so Elysia reads it as synchronous.
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
