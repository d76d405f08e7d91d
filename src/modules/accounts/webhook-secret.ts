/** The account's webhook signing secret columns (spec: Delivery rules 7), written for the webhooks module. */
import { eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { accounts } from "../../db/schema/index.ts";

/**
 * Locks the account row (`FOR UPDATE`) and returns its encrypted secret (null before the first), or undefined for no
 * account; serialises one account's webhook creates and rotations.
 */
export async function lockWebhookSecret(tx: DbOrTx, accountId: string): Promise<{ enc: string | null } | undefined> {
  const [acc] = await tx
    .select({ enc: accounts.webhookSecretEnc })
    .from(accounts)
    .where(eq(accounts.id, accountId))
    .for("update");
  return acc;
}

/** Stores `enc` as the current secret; `keepPrevious` keeps the old one (receivers accept both 15 min). */
export async function storeWebhookSecret(
  tx: DbOrTx,
  accountId: string,
  enc: string,
  now: Date,
  opts: { keepPrevious: boolean },
): Promise<void> {
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
