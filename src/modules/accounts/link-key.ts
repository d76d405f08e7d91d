/** The account's public-link key (docs/tracking-page.md#links): 32 random bytes, sealed with SECRETS_KEY. */
import { randomBytes } from "node:crypto";
import type { CoreDeps } from "../../core-deps.ts";
import { decryptSecret, encryptSecret } from "../../secrets/cipher.ts";

type Row = { k: string | null };

/**
 * The account's link key, created on first use and kept in `accounts.public_link_key_enc` (re-encrypted by
 * `rotate-secrets` like the signing secrets, so links survive a SECRETS_KEY rotation).
 * @throws Error when the account does not exist
 */
export async function accountLinkKey(deps: Pick<CoreDeps, "db" | "secretsKey">, accountId: string): Promise<Buffer> {
  const sql = deps.db.$client;
  let [row] = (await sql`select public_link_key_enc as k from accounts where id = ${accountId}`) as unknown as Row[];
  if (row && !row.k) {
    const sealed = encryptSecret(deps.secretsKey, accountId, randomBytes(32).toString("base64url"));
    // Two first uses at once: the first write wins, the other reads it back.
    await sql`update accounts set public_link_key_enc = ${sealed} where id = ${accountId} and public_link_key_enc is null`;
    [row] = (await sql`select public_link_key_enc as k from accounts where id = ${accountId}`) as unknown as Row[];
  }
  if (!row?.k) throw new Error("account not found");
  return Buffer.from(decryptSecret(deps.secretsKey, accountId, row.k), "base64url");
}
