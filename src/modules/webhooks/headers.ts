/**
 * Custom headers per webhook (docs/webhooks.md, "Custom headers"): the name rules the schema cannot state, the
 * masked form, encryption at rest. Names are RFC 9110 tokens (§5.6.2), values visible ASCII (§5.5).
 */
import type { ValidationItem } from "../../lib/errors.ts";
import { decryptSecret, encryptSecret } from "../../secrets/cipher.ts";
import { and, eq, isNotNull } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { webhooks } from "../../db/schema/index.ts";
import type { SecretsKey } from "../../secrets/key.ts";
import { openForRotation, type RotationReport } from "../accounts/secret-rotation.ts";

/** At most this many custom headers per webhook (AfterShip's limit per URL). */
export const MAX_CUSTOM_HEADERS = 5;
/** Characters per value at most. */
export const MAX_HEADER_VALUE_LENGTH = 1000;
/** RFC 9110 §5.6.2 `token` (tchar+). */
export const HEADER_NAME_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
/** RFC 9110 §5.5 field-value, visible ASCII, no leading or trailing space or tab. */
export const HEADER_VALUE_PATTERN = "^(?:[\\x21-\\x7E](?:[\\x20-\\x7E\\t]*[\\x21-\\x7E])?)?$";

const NAME_RE = new RegExp(HEADER_NAME_PATTERN);
/** Hop-by-hop and framing headers, and those the sender sets itself (lower case). */
const RESERVED = new Set([
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "user-agent",
  "x-service-signature",
  "expect",
  "content-length",
]);
const RESERVED_PREFIXES = ["proxy-", "content-", "webhook-", "x-webhook-"];

/** Why `name` cannot be a custom header, or null when it can. */
export function reservedHeaderReason(name: string): string | null {
  if (!NAME_RE.test(name)) return "Header name should be an HTTP token (RFC 9110): letters, digits and !#$%&'*+.^_`|~-";
  const n = name.toLowerCase();
  if (RESERVED.has(n) || RESERVED_PREFIXES.some((p) => n.startsWith(p)))
    return "Header name is reserved: hop-by-hop, framing, Host, Content-*, User-Agent, webhook-*, X-Webhook-* and the signature headers are set by the service";
  return null;
}

/** The name rules as 422 items for a body not yet schema-checked; a name twice in any case is refused too. */
export function customHeaderProblems(body: unknown): ValidationItem[] {
  const h = (body as { headers?: unknown } | null | undefined)?.headers;
  if (!h || typeof h !== "object" || Array.isArray(h)) return [];
  const items: ValidationItem[] = [];
  const seen = new Set<string>();
  for (const name of Object.keys(h)) {
    const why = reservedHeaderReason(name);
    if (why) items.push({ loc: ["body", "headers", name], msg: why, type: "value_error" });
    else if (seen.has(name.toLowerCase()))
      items.push({
        loc: ["body", "headers", name],
        msg: "Header name given twice (names are case-insensitive)",
        type: "value_error",
      });
    seen.add(name.toLowerCase());
  }
  return items;
}

/** What the API shows for a value: its first 4 characters then `…••••` from 12 characters on, else `••••`. */
function maskHeaderValue(value: string): string {
  return value.length >= 12 ? `${value.slice(0, 4)}…••••` : "••••";
}

const aad = (webhookId: string) => `webhook-headers:${webhookId}`;

/** The stored pair for `headers` of webhook `webhookId`: ciphertext (null when empty) and the masked copy. */
export function sealHeaders(
  key: Uint8Array,
  webhookId: string,
  headers: Record<string, string>,
): { headersEnc: string | null; headersMasked: Record<string, string> } {
  const names = Object.keys(headers);
  if (names.length === 0) return { headersEnc: null, headersMasked: {} };
  return {
    headersEnc: encryptSecret(key, aad(webhookId), JSON.stringify(headers)),
    headersMasked: Object.fromEntries(Object.entries(headers).map(([n, v]) => [n, maskHeaderValue(v)])),
  };
}

/** The raw headers of a stored ciphertext (empty for null). @throws when it was not sealed for this webhook and key. */
export function openHeaders(
  key: Uint8Array & { previous?: Uint8Array },
  webhookId: string,
  enc: string | null,
): Record<string, string> {
  return enc ? (JSON.parse(decryptSecret(key, aad(webhookId), enc)) as Record<string, string>) : {};
}

/** Re-encrypts custom headers under the current SECRETS_KEY (docs/deployment.md, Rotating SECRETS_KEY); rerunnable. */
export async function reencryptHeaders(db: Db, key: SecretsKey): Promise<RotationReport> {
  const report: RotationReport = { reEncrypted: 0, alreadyCurrent: 0, failed: 0 };
  const rows = await db
    .select({ id: webhooks.id, enc: webhooks.headersEnc })
    .from(webhooks)
    .where(isNotNull(webhooks.headersEnc));
  for (const { id, enc } of rows) {
    if (enc === null) continue;
    const plain = openForRotation(key, aad(id), enc);
    if (plain === "current") report.alreadyCurrent++;
    else if (plain === undefined) report.failed++;
    else {
      await db
        .update(webhooks)
        .set({ headersEnc: encryptSecret(key, aad(id), plain) })
        .where(and(eq(webhooks.id, id), eq(webhooks.headersEnc, enc)));
      report.reEncrypted++;
    }
  }
  return report;
}
