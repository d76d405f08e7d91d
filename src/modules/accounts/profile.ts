/** Account changes of the dashboard's profile page (docs/dashboard.md#profile): password, email, deletion. */
import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { accounts } from "../../db/schema/index.ts";
import { notifyAccountChanged } from "./auth-cache.ts";

/** Stores an argon2id password hash (the caller hashes; sessions are the dashboard's to end). */
export async function setPasswordHash(db: DbOrTx, accountId: string, passwordHash: string): Promise<void> {
  await db.update(accounts).set({ passwordHash, updatedAt: new Date() }).where(eq(accounts.id, accountId));
}

/**
 * Stores the normalised sign-in email; every replica's API-key cache drops the account (it caches the email).
 * @throws the driver's unique-violation error (code 23505) when another account has the address.
 */
export async function setEmail(db: DbOrTx, accountId: string, normalisedEmail: string): Promise<void> {
  await db.update(accounts).set({ email: normalisedEmail, updatedAt: new Date() }).where(eq(accounts.id, accountId));
  await notifyAccountChanged(db, accountId);
}

/**
 * Deletes the account row; what hangs off it goes by `on delete cascade`, and every replica's key cache drops the
 * account at commit (NOTIFY), so its keys answer 401 at once.
 */
export async function deleteAccountRow(tx: DbOrTx, accountId: string): Promise<void> {
  await tx.delete(accounts).where(eq(accounts.id, accountId));
  await notifyAccountChanged(tx, accountId);
}
