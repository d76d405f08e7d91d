/** Profile changes to one's own account (docs/dashboard.md#profile); routes check the current password first. */
import { and, eq, ne } from "drizzle-orm";
import type { Db, DbOrTx } from "../../../db/client.ts";
import { accounts, sessions } from "../../../db/schema/index.ts";
import { deleteAccountRow, setEmail, setPasswordHash } from "../../accounts/profile.ts";
import { EmailTakenError, findAccount, normaliseEmail } from "../../accounts/service.ts";
import { hashPassword, verifyPassword } from "../../accounts/password.ts";
import { deleteUnfollowedShipments, followedShipmentIds } from "../../following/follows.ts";

/** True when `password` is the account's password (false for an account without one). */
export async function checkPassword(db: DbOrTx, accountId: string, password: string): Promise<boolean> {
  const acc = await findAccount(db, accountId);
  if (!acc?.passwordHash || password.length === 0) return false;
  return verifyPassword(password, acc.passwordHash);
}

/** Sets the account's password and ends every session but `keepSessionId`. */
export async function setPassword(db: Db, accountId: string, password: string, keepSessionId?: string): Promise<void> {
  const passwordHash = await hashPassword(password);
  await db.transaction(async (tx) => {
    await setPasswordHash(tx, accountId, passwordHash);
    await tx
      .delete(sessions)
      .where(
        keepSessionId
          ? and(eq(sessions.accountId, accountId), ne(sessions.id, keepSessionId))
          : eq(sessions.accountId, accountId),
      );
  });
}

/** Changes the sign-in email (stored normalised); throws EmailTakenError when another account has it. */
export async function changeEmail(db: DbOrTx, accountId: string, email: string): Promise<string> {
  const normalised = normaliseEmail(email);
  const taken = await db
    .select({ id: accounts.id })
    .from(accounts)
    .where(and(eq(accounts.email, normalised), ne(accounts.id, accountId)))
    .limit(1);
  if (taken[0]) throw new EmailTakenError();
  try {
    // setEmail notifies: every replica's API-key cache drops the account.
    await setEmail(db, accountId, normalised);
  } catch (e) {
    // A concurrent change to the same address loses on the unique index.
    if ((e as { code?: string }).code === "23505" || (e as { cause?: { code?: string } }).cause?.code === "23505")
      throw new EmailTakenError();
    throw e;
  }
  return normalised;
}

/**
 * Deletes the account and its data in one transaction (cascading foreign keys, plus shipments no other account
 * follows); every replica's API-key cache drops it at commit, so its keys answer 401 at once.
 */
export async function deleteAccount(db: Db, accountId: string): Promise<void> {
  await db.transaction(async (tx) => {
    const followed = await followedShipmentIds(tx, accountId);
    await deleteAccountRow(tx, accountId);
    await deleteUnfollowedShipments(tx, followed);
  });
}
