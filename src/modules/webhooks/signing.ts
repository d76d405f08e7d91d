/**
 * Delivery signatures (spec: Authentication 5): `X-Service-Signature:
 * sha256=<hex HMAC-SHA256 of the exact raw body>`, keyed with the account's
 * signing secret (the whole `whsec_…` string as UTF-8 bytes).
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** The header value for `body` (the exact bytes sent). */
export function signBody(secret: string, body: Uint8Array | string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** Constant-time check of a header value against `body`, as a receiver does it. */
export function verifySignature(secret: string, body: Uint8Array | string, header: string): boolean {
  const expected = Buffer.from(signBody(secret, body));
  const got = Buffer.from(header);
  return got.length === expected.length && timingSafeEqual(got, expected);
}
