/** Encryption at rest with `SECRETS_KEY` (AES-256-GCM), the account id bound as associated data. */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

function keyOf(key: Uint8Array): Buffer {
  if (key.byteLength !== 32) throw new Error("SECRETS_KEY must be 32 bytes");
  return Buffer.from(key);
}

/** Encrypts `secret` for account `accountId`. @throws when `key` is not 32 bytes. */
export function encryptSecret(key: Uint8Array, accountId: string, secret: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv("aes-256-gcm", keyOf(key), iv);
  c.setAAD(Buffer.from(accountId));
  const ct = Buffer.concat([c.update(secret, "utf8"), c.final()]);
  return ["v1", iv.toString("base64url"), c.getAuthTag().toString("base64url"), ct.toString("base64url")].join(".");
}

const cache = new Map<string, string>();

/**
 * Decrypts a stored secret, memoised by ciphertext; falls back to `previous` (SECRETS_KEY_PREVIOUS) during a rotation.
 * @throws when the value was not produced with this key (or its previous) and account
 */
export function decryptSecret(key: Uint8Array & { previous?: Uint8Array }, accountId: string, stored: string): string {
  const memoKey = `${accountId}|${stored}`;
  const memo = cache.get(memoKey);
  if (memo !== undefined) return memo;
  try {
    return decryptWith(key, accountId, stored, memoKey);
  } catch (err) {
    if (!key.previous) throw err;
    return decryptWith(key.previous, accountId, stored, memoKey);
  }
}

function decryptWith(key: Uint8Array, accountId: string, stored: string, memoKey: string): string {
  const secret = decryptSecretWith(key, accountId, stored);
  if (cache.size > 10_000) cache.clear();
  cache.set(memoKey, secret);
  return secret;
}

/** Decrypts with exactly `key` (no fallback, no memo). @throws when not produced with this key and account */
export function decryptSecretWith(key: Uint8Array, accountId: string, stored: string): string {
  const [v, iv, tag, ct] = stored.split(".");
  if (v !== "v1" || !iv || !tag || ct === undefined) throw new Error("unrecognised secret format");
  const d = createDecipheriv("aes-256-gcm", keyOf(key), Buffer.from(iv, "base64url"));
  d.setAAD(Buffer.from(accountId));
  d.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([d.update(Buffer.from(ct, "base64url")), d.final()]).toString("utf8");
}
