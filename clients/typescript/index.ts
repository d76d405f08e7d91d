/**
 * A small typed client for the Courier Tracking API: `openapi-fetch` over the
 * types generated from the service's `/openapi.json` (`schema.d.ts`), plus
 * the two webhook signature checks a receiver needs.
 *
 *   const api = createTrackingClient({ baseUrl: "https://localhost:8443", apiKey: "ctk_…" });
 *   const { data, error } = await api.GET("/v1/track", { params: { query: { courier: "auto", tracking_number: "1Z999AA10123456784" } } });
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./schema.d.ts";

export type { components, paths } from "./schema.d.ts";
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
  return createClient<paths>({ baseUrl: opts.baseUrl.replace(/\/+$/, ""), headers: { "X-API-Key": opts.apiKey }, ...(opts.fetch ? { fetch: opts.fetch } : {}) });
}

const equal = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * The spec's scheme: `X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw
 * body>`, keyed with the whole secret string. Pass the raw bytes as received.
 * During a rotation, call it with the old and the new secret.
 */
export function verifyServiceSignature(secret: string, rawBody: string | Uint8Array, header: string | null | undefined): boolean {
  if (!header) return false;
  return equal(`sha256=${createHmac("sha256", secret).update(rawBody).digest("hex")}`, header);
}

/**
 * Standard Webhooks: `webhook-signature` is `v1,<base64 HMAC-SHA256 of
 * "<webhook-id>.<webhook-timestamp>.<body>">` (space-separated list), keyed
 * with the bytes of the base64 after `whsec_`. Rejects a `webhook-timestamp`
 * more than `toleranceSeconds` (default 300) from `nowMs` (default now), so a
 * captured delivery cannot be replayed later. `headers` as received
 * (any case).
 */
export function verifyStandardWebhook(
  secret: string,
  rawBody: string | Uint8Array,
  headers: Record<string, string | undefined> | Headers,
  opts: { toleranceSeconds?: number; nowMs?: number } = {},
): boolean {
  const get = (name: string) => (headers instanceof Headers ? headers.get(name) : Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1]) ?? undefined;
  const id = get("webhook-id");
  const ts = get("webhook-timestamp");
  const sigs = get("webhook-signature");
  if (!id || !ts || !sigs || !/^\d+$/.test(ts)) return false;
  if (Math.abs((opts.nowMs ?? Date.now()) / 1000 - Number(ts)) > (opts.toleranceSeconds ?? 300)) return false;
  const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
  const expected = createHmac("sha256", key).update(`${id}.${ts}.`).update(rawBody).digest("base64");
  return sigs.split(" ").some((s) => s.startsWith("v1,") && equal(s.slice(3), expected));
}
