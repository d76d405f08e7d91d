/**
 * The account's webhook signing secret columns (`webhook_secret_enc`, `webhook_secret_prev_enc`,
 * `webhook_secret_rotated_at`, `webhook_secret_revealed`; spec: POST /v1/webhooks, rotate-secret, Delivery rules
 * 7). The accounts module is the one writer of `accounts` (docs/spec-map.md, "Table owners"): the webhooks module
 * generates and encrypts a secret and stores it through these functions, in its own transaction.
 */
import { eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { accounts } from "../../db/schema/index.ts";

/**
 * Locks the account row (`FOR UPDATE`, until the caller's transaction ends) and returns its encrypted current
 * secret (`null` before the first one), or undefined when there is no such account. The lock serialises webhook
 * creates and secret rotations of one account.
 */
export async function lockWebhookSecret(tx: DbOrTx, accountId: string): Promise<{ enc: string | null } | undefined> {
  const [acc] = await tx.select({ enc: accounts.webhookSecretEnc }).from(accounts).where(eq(accounts.id, accountId)).for("update");
  return acc;
}

/**
 * Stores `enc` (the encrypted new secret) as the account's current secret, revealed once, rotated at `now`.
 * With `keepPrevious` the current one moves to `webhook_secret_prev_enc` (a rotation: receivers accept both for
 * 15 minutes); without, the previous one is left as it is (the first secret).
 */
export async function storeWebhookSecret(tx: DbOrTx, accountId: string, enc: string, now: Date, opts: { keepPrevious: boolean }): Promise<void> {
  await tx
    .update(accounts)
    .set({
      ...(opts.keepPrevious ? { webhookSecretPrevEnc: sql`${accounts.webhookSecretEnc}` } : {}),
      webhookSecretEnc: enc,
      webhookSecretRotatedAt: now,
      webhookSecretRevealed: true,
      updatedAt: now,
    })
    .where(eq(accounts.id, accountId));
}
