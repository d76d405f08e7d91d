/**
 * Delivery signatures and headers, two schemes over one secret: the spec's `X-Service-Signature` (Authentication 5,
 * keyed with the secret text) and Standard Webhooks' `webhook-signature` (standardwebhooks.com, "Signature scheme",
 * keyed with the secret's bytes). Why: docs/events.md#two-signatures-one-secret.
 */

/** HMAC-SHA256 through Bun's hasher: node:crypto's Hmac costs ~3× per call, twice per attempt. */
const hmac = (key: string | Buffer) => new Bun.CryptoHasher("sha256", key);

// Keyed hashers by secret, copied per signature to skip the key schedule. Bounded; emptied when full.
const keyed = new Map<string, { text: Bun.CryptoHasher; standard?: Bun.CryptoHasher }>();
function keyedFor(secret: string) {
  let k = keyed.get(secret);
  if (!k) {
    if (keyed.size >= 10_000) keyed.clear();
    k = { text: hmac(secret) };
    keyed.set(secret, k);
  }
  return k;
}

/** The header value for `body` (the exact bytes sent). */
export function signBody(secret: string, body: Uint8Array | string): string {
  return `sha256=${keyedFor(secret).text.copy().update(body).digest("hex")}`;
}

/** The key bytes of a `whsec_…` secret: the base64 (or base64url) after the prefix, decoded. */
export function secretKeyBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
}

/** `webhook-signature`: `v1,` + base64 HMAC-SHA256 of `<msgId>.<timestampSeconds>.<body>` (key: {@link secretKeyBytes}). */
export function standardSignature(
  secret: string,
  msgId: string,
  timestampSeconds: number,
  body: Uint8Array | string,
): string {
  const k = keyedFor(secret);
  k.standard ??= hmac(secretKeyBytes(secret));
  const mac = k.standard.copy().update(`${msgId}.${timestampSeconds}.`).update(body).digest("base64");
  return `v1,${mac}`;
}

export interface DeliveryHeaderInput {
  secret: string;
  /** The event's id (`evt_…`): `X-Webhook-Event-Id` and `webhook-id`. */
  eventId: string;
  webhookId: string;
  /** 1-based (`X-Webhook-Delivery: <webhook_id>-<attempt>`). */
  attempt: number;
  event: string;
  mode: "live" | "test";
  /** When the attempt is made, ms since the epoch (`webhook-timestamp` in seconds). */
  nowMs: number;
  /** The event's number for this webhook (`X-Webhook-Sequence`); absent for test fires. */
  sequence?: number | null;
}

/** Every header of one attempt over the exact `body` bytes (spec: Events "Headers on every delivery"; docs/events.md). */
export function deliveryHeaders(h: DeliveryHeaderInput, body: Uint8Array): Record<string, string> {
  const ts = Math.floor(h.nowMs / 1000);
  const out: Record<string, string> = {
    "x-service-signature": signBody(h.secret, body),
    "x-webhook-event": h.event,
    "x-webhook-delivery": `${h.webhookId}-${h.attempt}`,
    "x-webhook-mode": h.mode,
    "x-webhook-event-id": h.eventId,
    "webhook-id": h.eventId,
    "webhook-timestamp": String(ts),
    "webhook-signature": standardSignature(h.secret, h.eventId, ts, body),
  };
  if (h.sequence != null) out["x-webhook-sequence"] = String(h.sequence);
  return out;
}
