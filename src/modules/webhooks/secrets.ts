/** Webhook signing secrets (docs/spec-map.md, "Decisions", signing secret; docs/events.md). */
import { randomBytes } from "node:crypto";

/** A fresh raw signing secret: `whsec_` + standard base64 of 32 random bytes (what Standard Webhooks decodes). */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}
