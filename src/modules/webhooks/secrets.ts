/**
 * Webhook signing secrets: `whsec_` + 32 random bytes in base64 (docs/spec-map.md, "Decisions", signing secret),
 * stored encrypted with `SECRETS_KEY` (src/secrets/cipher.ts).
 */
import { randomBytes } from "node:crypto";

/**
 * A fresh raw signing secret (shown to the customer once): `whsec_` +
 * standard base64 of 32 random bytes, the form the Standard Webhooks
 * libraries decode (secrets issued before were base64url; both still verify).
 */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}
