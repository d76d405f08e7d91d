/** One JSON content type for every answer, the same Elysia sends (docs/api-conventions.md#one-content-type). */
export const JSON_CONTENT_TYPE = "application/json;charset=utf-8";

/** A JSON response with {@link JSON_CONTENT_TYPE}; `headers` are added after the content type. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": JSON_CONTENT_TYPE, ...headers } });
}
