/**
 * The alert address's confirmation links (docs/alerts.md#the-alert-address), made as the dashboard's password links
 * are: a 256-bit token in the link, only its SHA-256 stored, used once, expiring.
 */
import { createHash, randomBytes } from "node:crypto";
import { and, eq, gt, isNull, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import { alertAddressLinks, alerts, alertSettings } from "../../db/schema/index.ts";
import { newId } from "../../lib/ids.ts";
import { encryptSecret } from "../../secrets/cipher.ts";
import { ADDRESS_LINK_TTL_MS, CONFIRMATIONS_PER_HOUR } from "./model.ts";

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** The dashboard path that opens a confirmation link. */
export const confirmPath = (token: string) => `/dashboard/alerts/confirm/${token}`;

/** The address waiting for confirmation (its newest unused, unexpired link), or null. */
export async function pendingAddress(
  db: DbOrTx,
  accountId: string,
  nowMs: number,
): Promise<{ email: string; expiresAt: Date } | null> {
  const [r] = await db
    .select({ email: alertAddressLinks.email, expiresAt: alertAddressLinks.expiresAt })
    .from(alertAddressLinks)
    .where(
      and(
        eq(alertAddressLinks.accountId, accountId),
        isNull(alertAddressLinks.usedAt),
        gt(alertAddressLinks.expiresAt, new Date(nowMs)),
      ),
    )
    .orderBy(sql`${alertAddressLinks.createdAt} desc`)
    .limit(1);
  return r ?? null;
}

/** Expires the account's unused links (a new address, or the owner went back to the sign-in address). */
export async function cancelPendingAddress(db: DbOrTx, accountId: string, nowMs: number): Promise<void> {
  const now = new Date(nowMs);
  await db
    .update(alertAddressLinks)
    .set({ expiresAt: now })
    .where(
      and(
        eq(alertAddressLinks.accountId, accountId),
        isNull(alertAddressLinks.usedAt),
        gt(alertAddressLinks.expiresAt, now),
      ),
    );
}

/**
 * Issues a link for `email` and queues its email (kind `address_confirmation`, sent to `email` only; the token rides
 * encrypted with SECRETS_KEY until sent, then is removed). Expires the account's earlier links. False, nothing done,
 * when {@link CONFIRMATIONS_PER_HOUR} were queued in the last hour.
 */
export async function requestAddress(
  db: Db,
  secretsKey: Uint8Array,
  accountId: string,
  email: string,
  nowMs: number,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    // One account's requests queue behind each other, so the hourly count cannot be raced past.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`alert_address:${accountId}`}, 0))`);
    const [n] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(alerts)
      .where(
        and(
          eq(alerts.accountId, accountId),
          eq(alerts.kind, "address_confirmation"),
          gt(alerts.createdAt, new Date(nowMs - 3_600_000)),
        ),
      );
    if ((n?.n ?? 0) >= CONFIRMATIONS_PER_HOUR) return false;
    await cancelPendingAddress(tx, accountId, nowMs);
    const token = randomBytes(32).toString("base64url");
    const id = newId("lnk");
    const expiresAt = new Date(nowMs + ADDRESS_LINK_TTL_MS);
    await tx
      .insert(alertAddressLinks)
      .values({ id, tokenHash: sha256(token), accountId, email, createdAt: new Date(nowMs), expiresAt });
    await tx.insert(alerts).values({
      accountId,
      createdAt: new Date(nowMs),
      nextAttemptAt: new Date(nowMs),
      kind: "address_confirmation",
      dedupeKey: id,
      state: "queued",
      details: { email, expires_at: expiresAt.toISOString(), token: encryptSecret(secretsKey, accountId, token) },
    });
    return true;
  });
}

/**
 * Uses the link behind `token` up (one conditional update: two submissions cannot both win) and makes its address
 * the account's alert address. @returns the address, or undefined when the token is unknown, used or expired
 */
export async function confirmAddress(db: Db, token: string, nowMs: number): Promise<string | undefined> {
  if (!TOKEN_SHAPE.test(token)) return undefined;
  const now = new Date(nowMs);
  return db.transaction(async (tx) => {
    const [link] = await tx
      .update(alertAddressLinks)
      .set({ usedAt: now })
      .where(
        and(
          eq(alertAddressLinks.tokenHash, sha256(token)),
          isNull(alertAddressLinks.usedAt),
          gt(alertAddressLinks.expiresAt, now),
        ),
      )
      .returning({ accountId: alertAddressLinks.accountId, email: alertAddressLinks.email });
    if (!link) return undefined;
    await tx
      .insert(alertSettings)
      .values({ accountId: link.accountId, email: link.email })
      .onConflictDoUpdate({ target: alertSettings.accountId, set: { email: link.email, updatedAt: sql`now()` } });
    return link.email;
  });
}

/** The address a live link would confirm (for the page that asks to confirm); undefined when not live. */
export async function findAddressLink(db: DbOrTx, token: string, nowMs: number): Promise<string | undefined> {
  if (!TOKEN_SHAPE.test(token)) return undefined;
  const [r] = await db
    .select({ email: alertAddressLinks.email })
    .from(alertAddressLinks)
    .where(
      and(
        eq(alertAddressLinks.tokenHash, sha256(token)),
        isNull(alertAddressLinks.usedAt),
        gt(alertAddressLinks.expiresAt, new Date(nowMs)),
      ),
    );
  return r?.email;
}
