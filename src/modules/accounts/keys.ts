/** API keys (spec-map Decisions: Accounts): `ctk_` + 32 random bytes, only the SHA-256 stored. */
import { randomBytes } from "node:crypto";

const API_KEY_PREFIX = "ctk_";
const KEY_SHAPE = /^ctk_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString("base64url");
}

/** SHA-256 hex of a key, as stored in `api_keys.key_hash`. Runs on every authenticated request: Bun's one-shot hasher. */
export function hashApiKey(key: string): string {
  return Bun.CryptoHasher.hash("sha256", key, "hex");
}

/** Cheap shape check before any hashing or database work: a 10 KB header never reaches the database. */
export function looksLikeApiKey(key: string): boolean {
  return key.length === 47 && KEY_SHAPE.test(key);
}

/** Display prefix: `ctk_` and the first 6 characters of the random part. */
export function keyDisplayPrefix(key: string): string {
  return key.slice(0, 10);
}
