/**
 * A small typed client for the Courier Tracking API: `openapi-fetch` over the
 * types generated from the service's `/openapi.json` (`schema.d.ts`), plus
 * the two webhook signature checks a receiver needs. Published as the npm
 * package `@courier-tracking/client` (README.md here): ESM for Node ≥ 20 and Bun.
 *
 *   const api = createTrackingClient({ baseUrl: "https://localhost:8443", apiKey: "ctk_…" });
 *   const { data, error } = await api.GET("/v1/track", { params: { query: { courier: "auto", tracking_number: "1Z999AA10123456784" } } });
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import createClient from "openapi-fetch";
import type { Client } from "openapi-fetch";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import type { paths } from "./schema.d.ts";

export type { components, paths } from "./schema.d.ts";
/** The `standardwebhooks` package's verifier, re-exported: `new Webhook(secret).verify(rawBody, headers)` returns the payload or throws. */
export { Webhook, WebhookVerificationError };
export type TrackingClient = Client<paths>;

export interface ClientOptions {
  /** e.g. `https://api.example.com` (no trailing slash needed). */
  baseUrl: string;
  /** Your API key (`ctk_…`), sent as `X-API-Key`. */
  apiKey: string;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
}

/** A typed client; every call sends `X-API-Key`. Pass `Idempotency-Key` per POST in `params.header`. */
export function createTrackingClient(opts: ClientOptions): TrackingClient {
  return createClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/+$/, ""),
    headers: { "X-API-Key": opts.apiKey },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}

const equal = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * The spec's scheme: `X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw
 * body>`, keyed with the whole secret string. Pass the raw bytes as received.
 * During a rotation, call it with the old and the new secret.
 */
export function verifyServiceSignature(
  secret: string,
  rawBody: string | Uint8Array,
  header: string | null | undefined,
): boolean {
  if (!header) return false;
  return equal(`sha256=${createHmac("sha256", secret).update(rawBody).digest("hex")}`, header);
}

/**
 * Standard Webhooks (standardwebhooks.com): checks `webhook-id`, `webhook-timestamp` and `webhook-signature`
 * with the `standardwebhooks` package's own verifier — the signature over `<id>.<timestamp>.<raw body>` keyed
 * with the secret after `whsec_`, and a timestamp within 5 minutes of now, so a captured delivery cannot be
 * replayed later. Pass the raw body as received and the headers in any case. During a secret rotation, call it
 * with the old and the new secret. For the parsed payload or the reason of a failure, use {@link Webhook} directly.
 */
export function verifyStandardWebhook(
  secret: string,
  rawBody: string | Uint8Array,
  headers: Record<string, string | string[] | undefined> | Headers,
): boolean {
  const picked: Record<string, string> = {};
  if (headers instanceof Headers)
    headers.forEach((v, k) => {
      picked[k] = v;
    });
  else for (const [k, v] of Object.entries(headers)) if (typeof v === "string") picked[k.toLowerCase()] = v;
  try {
    new Webhook(secret).verify(typeof rawBody === "string" ? rawBody : Buffer.from(rawBody), picked);
    return true;
  } catch (err) {
    if (err instanceof WebhookVerificationError) return false;
    throw err;
  }
}
