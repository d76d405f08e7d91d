/** The key encrypting signing secrets at rest, one per database (docs/deployment.md#rotating-secrets_key). */
import { createHmac, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { sql } from "drizzle-orm";
import { ConfigError, type Config } from "../config/index.ts";
import type { Db } from "../db/client.ts";
import { initSetting, putSetting, readSetting } from "../db/settings.ts";
import { decryptSecret } from "./cipher.ts";

/** The current key; `previous` (while rotating) is tried for decryption only. */
export type SecretsKey = Uint8Array & { readonly previous?: Uint8Array };

/** The `service_settings` row holding the check value. */
const KEY_CHECK_SETTING = "secrets_key_check";
const KEY_CHECK_CONSTANT = "courier-tracking-api secrets key check v1";
const KEY_CHECK_LOCK = 727_003; // advisory lock: two first starts must not store two values

/** Refusal to start with a key that does not match the database's; the message is one line. */
export class SecretsKeyMismatchError extends Error {}

function decode(value: string, variable: string): Uint8Array {
  const buf = Buffer.from(value.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  if (buf.length !== 32) throw new ConfigError(variable, "must encode exactly 32 bytes (base64 or base64url)");
  return new Uint8Array(buf);
}

/**
 * The process's key ring from configuration.
 * @throws ConfigError for a malformed key, or `DATABASE_URL` without `SECRETS_KEY` or `SECRETS_KEY_GENERATE=single-node`
 */
export function loadSecretsKey(
  config: Pick<
    Config,
    "secretsKey" | "secretsKeyPrevious" | "dataDir" | "databaseUrl" | "secretsKeyGenerateSingleNode"
  >,
): { key: SecretsKey; generated: boolean } {
  const previous = config.secretsKeyPrevious ? decode(config.secretsKeyPrevious, "SECRETS_KEY_PREVIOUS") : undefined;
  const withPrevious = (k: Uint8Array): SecretsKey => (previous ? Object.assign(k, { previous }) : k);
  if (config.secretsKey) return { key: withPrevious(decode(config.secretsKey, "SECRETS_KEY")), generated: false };
  if (config.databaseUrl && !config.secretsKeyGenerateSingleNode)
    throw new ConfigError(
      "SECRETS_KEY",
      "is required with DATABASE_URL: every process on one database must share one key (or set SECRETS_KEY_GENERATE=single-node to let this single process keep a generated key in DATA_DIR)",
    );
  const dir = resolve(config.dataDir);
  const file = join(dir, "secrets.key");
  if (existsSync(file))
    return { key: withPrevious(decode(readFileSync(file, "utf8").trim(), "DATA_DIR/secrets.key")), generated: true };
  mkdirSync(dir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, key.toString("base64url"), { mode: 0o600 });
  return { key: withPrevious(new Uint8Array(key)), generated: true };
}

/** The check value of `key`: HMAC-SHA256 of a fixed constant, hex. */
export function keyCheckValue(key: Uint8Array): string {
  return createHmac("sha256", key).update(KEY_CHECK_CONSTANT).digest("hex");
}

/**
 * Compares the key with the database's check value, storing it on first use (after checking one stored secret
 * decrypts). @returns `stored`, `current` or `previous` (a rotation in progress)
 * @throws SecretsKeyMismatchError when neither key matches
 */
export async function verifySecretsKey(db: Db, key: SecretsKey): Promise<"stored" | "current" | "previous"> {
  const mine = keyCheckValue(key);
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${KEY_CHECK_LOCK})`);
    const stored = await readSetting(tx, KEY_CHECK_SETTING);
    if (stored !== undefined) {
      if (stored === mine) return "current";
      if (key.previous && stored === keyCheckValue(key.previous)) return "previous";
      throw mismatch();
    }
    const [sample] = (await tx.execute(
      sql`select id, webhook_secret_enc as enc from accounts where webhook_secret_enc is not null limit 1`,
    )) as unknown as { id: string; enc: string }[];
    if (sample && !decrypts(key, sample.id, sample.enc)) throw mismatch();
    await initSetting(tx, KEY_CHECK_SETTING, mine);
    return "stored";
  });
}

/** Records `key` as the database's key (after a rotation re-encrypted every secret). */
export async function storeKeyCheck(db: Db, key: Uint8Array): Promise<void> {
  await putSetting(db, KEY_CHECK_SETTING, keyCheckValue(key));
}

function decrypts(key: SecretsKey, accountId: string, enc: string): boolean {
  try {
    decryptSecret(key, accountId, enc);
    return true;
  } catch {
    return false;
  }
}

function mismatch(): SecretsKeyMismatchError {
  return new SecretsKeyMismatchError(
    "SECRETS_KEY does not match the key this database's webhook secrets are encrypted with; every process on one database must use the same SECRETS_KEY (see docs/deployment.md, Rotating SECRETS_KEY); refusing to start",
  );
}
