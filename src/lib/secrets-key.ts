/**
 * The key that encrypts webhook signing secrets at rest (CONTRACT 7 and 10):
 * `SECRETS_KEY` (32 bytes, base64 or base64url), else generated once into
 * `DATA_DIR/secrets.key` (mode 0600) and reused.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ConfigError } from "../config.ts";

export function loadSecretsKey(secretsKey: string | undefined, dataDir: string): Uint8Array {
  if (secretsKey) {
    const buf = Buffer.from(secretsKey.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    if (buf.length !== 32) throw new ConfigError("SECRETS_KEY", "must encode exactly 32 bytes (base64 or base64url)");
    return new Uint8Array(buf);
  }
  const dir = resolve(dataDir);
  const file = join(dir, "secrets.key");
  if (existsSync(file)) return loadSecretsKey(readFileSync(file, "utf8").trim(), dataDir);
  mkdirSync(dir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, key.toString("base64url"), { mode: 0o600 });
  return new Uint8Array(key);
}
