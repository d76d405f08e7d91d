/**
 * Re-encryption of every stored webhook signing secret under the current
 * SECRETS_KEY, the second half of a key rotation (docs/deployment.md,
 * Rotating SECRETS_KEY): processes already run with the new SECRETS_KEY and
 * the old one as SECRETS_KEY_PREVIOUS; this rewrites what the old key
 * encrypted, then records the new key's check value so processes that still
 * have only the old key refuse to start. In the accounts module because the
 * secrets are columns of `accounts`, which only this module writes
 * (docs/spec-map.md, "Table owners"); the cipher and the key check stay in
 * src/secrets/.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { decryptSecretWith, encryptSecret } from "../../secrets/cipher.ts";
import { storeKeyCheck, type SecretsKey } from "../../secrets/key.ts";

export interface RotationReport {
  /** Values rewritten under the new key. */
  reEncrypted: number;
  /** Values already under the new key (written since the new key was deployed, or a second run). */
  alreadyCurrent: number;
  /** Values neither key decrypts; the check value is then left unchanged. */
  failed: number;
}

const COLUMNS = ["webhook_secret_enc", "webhook_secret_prev_enc"] as const;

/**
 * Rewrites every secret the previous key encrypted. Each update is guarded
 * by the old ciphertext, so a secret the customer rotated meanwhile is left
 * alone. Safe to run again. The key check value moves to the new key only
 * when nothing failed here and `storeCheck` (false when other values failed) holds.
 */
export async function reencryptSecrets(db: Db, key: SecretsKey, { storeCheck = true } = {}): Promise<RotationReport> {
  const report: RotationReport = { reEncrypted: 0, alreadyCurrent: 0, failed: 0 };
  const rows = (await db.execute(
    sql`select id, webhook_secret_enc, webhook_secret_prev_enc from accounts where webhook_secret_enc is not null or webhook_secret_prev_enc is not null`,
  )) as unknown as Record<string, string | null>[];
  for (const row of rows) {
    const id = row.id!;
    for (const column of COLUMNS) {
      const stored = row[column];
      if (!stored) continue;
      const plain = openForRotation(key, id, stored);
      if (plain === "current") report.alreadyCurrent++;
      else if (plain === undefined) report.failed++;
      else {
        await db.execute(sql`update accounts set ${sql.identifier(column)} = ${encryptSecret(key, id, plain)} where id = ${id} and ${sql.identifier(column)} = ${stored}`);
        report.reEncrypted++;
      }
    }
  }
  if (report.failed === 0 && storeCheck) await storeKeyCheck(db, key);
  return report;
}

/** `current` when the new key opens it, the plaintext when only the previous key does, else undefined (`aad`: the bound associated data). */
export function openForRotation(key: SecretsKey, aad: string, stored: string): "current" | string | undefined {
  try {
    decryptSecretWith(key, aad, stored);
    return "current";
  } catch {}
  if (!key.previous) return undefined;
  try {
    return decryptSecretWith(key.previous, aad, stored);
  } catch {
    return undefined;
  }
}
