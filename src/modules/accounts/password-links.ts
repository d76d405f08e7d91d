/** One-time password links (docs/dashboard.md#password-links). */
import { createHash, randomBytes } from "node:crypto";
import { and, eq, gt, isNull } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { accounts, passwordLinks } from "../../db/schema/index.ts";
import { newId } from "../../lib/ids.ts";
import { findAccountByEmail } from "./service.ts";

export type PasswordLinkPurpose = "reset" | "welcome";

/** Lifetime of a link: a reset link 1 hour, the development account's welcome link 24 hours. */
const LINK_TTL_MS: Record<PasswordLinkPurpose, number> = { reset: 3_600_000, welcome: 24 * 3_600_000 };
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** The dashboard path that opens a link. */
const linkPath = (token: string) => `/dashboard/password-link/${token}`;

/** Issues a link, expiring the account's unused ones. @returns the raw token (shown once) and the expiry */
export async function issuePasswordLink(
  db: DbOrTx,
  accountId: string,
  purpose: PasswordLinkPurpose,
  nowMs: number,
): Promise<{ token: string; path: string; expiresAt: Date }> {
  const token = randomBytes(32).toString("base64url");
  const now = new Date(nowMs);
  const expiresAt = new Date(nowMs + LINK_TTL_MS[purpose]);
  await db
    .update(passwordLinks)
    .set({ expiresAt: now })
    .where(and(eq(passwordLinks.accountId, accountId), isNull(passwordLinks.usedAt), gt(passwordLinks.expiresAt, now)));
  await db
    .insert(passwordLinks)
    .values({ id: newId("lnk"), tokenHash: sha256(token), accountId, purpose, createdAt: now, expiresAt });
  return { token, path: linkPath(token), expiresAt };
}

/** The unused, unexpired link behind `token` with its account's email; undefined otherwise. Does not use it up. */
export async function findPasswordLink(
  db: DbOrTx,
  token: string,
  nowMs: number,
): Promise<{ accountId: string; email: string; purpose: PasswordLinkPurpose } | undefined> {
  if (!TOKEN_SHAPE.test(token)) return undefined;
  const rows = await db
    .select({ accountId: passwordLinks.accountId, email: accounts.email, purpose: passwordLinks.purpose })
    .from(passwordLinks)
    .innerJoin(accounts, eq(accounts.id, passwordLinks.accountId))
    .where(
      and(
        eq(passwordLinks.tokenHash, sha256(token)),
        isNull(passwordLinks.usedAt),
        gt(passwordLinks.expiresAt, new Date(nowMs)),
      ),
    )
    .limit(1);
  const r = rows[0];
  return r ? { ...r, purpose: r.purpose as PasswordLinkPurpose } : undefined;
}

/** Uses the link up in one conditional update (two submissions cannot both win); undefined when unknown, used or expired. */
export async function usePasswordLink(db: DbOrTx, token: string, nowMs: number): Promise<string | undefined> {
  if (!TOKEN_SHAPE.test(token)) return undefined;
  const now = new Date(nowMs);
  const rows = await db
    .update(passwordLinks)
    .set({ usedAt: now })
    .where(
      and(eq(passwordLinks.tokenHash, sha256(token)), isNull(passwordLinks.usedAt), gt(passwordLinks.expiresAt, now)),
    )
    .returning({ accountId: passwordLinks.accountId });
  return rows[0]?.accountId;
}

/** The development account's welcome link (printed once at the first start, beside its API key): its path. */
export async function devPasswordLink(db: DbOrTx, email: string, nowMs: number): Promise<string> {
  const acc = await findAccountByEmail(db, email);
  if (!acc) throw new Error(`no account ${email}`);
  return (await issuePasswordLink(db, acc.id, "welcome", nowMs)).path;
}
