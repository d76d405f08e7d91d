/** Re-encrypts every webhook signing secret and public link key under SECRETS_KEY (docs/deployment.md#rotating-secrets_key). */
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

const COLUMNS = ["webhook_secret_enc", "webhook_secret_prev_enc", "public_link_key_enc"] as const;

/** Rewrites what the previous key encrypted, guarded by the old ciphertext; safe to run again. The key check moves only when nothing failed and `storeCheck` holds. */
export async function reencryptSecrets(db: Db, key: SecretsKey, { storeCheck = true } = {}): Promise<RotationReport> {
  const report: RotationReport = { reEncrypted: 0, alreadyCurrent: 0, failed: 0 };
  const rows = (await db.execute(
    sql`select id, webhook_secret_enc, webhook_secret_prev_enc, public_link_key_enc from accounts where webhook_secret_enc is not null or webhook_secret_prev_enc is not null or public_link_key_enc is not null`,
  )) as unknown as ({ id: string } & Record<(typeof COLUMNS)[number], string | null>)[];
  for (const row of rows) {
    const id = row.id;
    for (const column of COLUMNS) {
      const stored = row[column];
      if (!stored) continue;
      const plain = openForRotation(key, id, stored);
      if (plain === "current") report.alreadyCurrent++;
      else if (plain === undefined) report.failed++;
      else {
        await db.execute(
          sql`update accounts set ${sql.identifier(column)} = ${encryptSecret(key, id, plain)} where id = ${id} and ${sql.identifier(column)} = ${stored}`,
        );
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
