/**
 * Dashboard sessions: rows keyed by the SHA-256 of a random cookie token (never stored), each with its CSRF token;
 * cookies go through Elysia's `cookie` context. Why: docs/dashboard.md#decisions ("Sessions", "Forms and cookies").
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { and, eq, gt, lt } from "drizzle-orm";
import type { Cookie } from "elysia";
import type { Db } from "../../db/client.ts";
import { deleteInBatches, type PruneBatches } from "../../db/batches.ts";
import { accounts, sessions } from "../../db/schema/index.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import { defined } from "../../lib/defined.ts";

/** Absolute session lifetime: 12 hours. */
export const SESSION_TTL_MS = 12 * 3_600_000;
export const SESSION_COOKIE = "ct_session";
/** Pre-session CSRF cookie for the sign-in and sign-up forms (double submit). */
export const PRE_CSRF_COOKIE = "ct_csrf";
/** Attributes of both dashboard cookies (Path is not `/`, so no `__Host-` prefix). */
const COOKIE_ATTRS = { path: "/dashboard", httpOnly: true, secure: true, sameSite: "lax" } as const;

export interface DashboardSession {
  id: string;
  csrfToken: string;
  expiresAt: Date;
  account: { id: string; email: string; plan: string; status: string };
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
/** 32 random bytes, base64url. */
export const randomToken = () => randomBytes(32).toString("base64url");

/** Constant-time string comparison (false on length mismatch). */
export function safeEqual(a: string | undefined, b: string | undefined): boolean {
  if (typeof a !== "string" || typeof b !== "string") return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The request's cookies, Elysia's `cookie` context (a JSON-looking value arrives as an object). */
export type CookieJar = Record<string, Cookie<unknown>>;

/** A cookie's text; undefined when missing, empty or not a string (the dashboard's cookies hold base64url tokens). */
export function cookieText(jar: CookieJar, name: string): string | undefined {
  const value = jar[name]?.value;
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Sets a dashboard cookie; `maxAgeSeconds` 0 deletes it, undefined makes a browser-session cookie. */
export function putCookie(jar: CookieJar, name: string, value: string, maxAgeSeconds?: number): void {
  // Elysia's jar is a proxy that makes a cookie for any name on access.
  defined(jar[name], `cookie ${name}`).set({ value, ...COOKIE_ATTRS, maxAge: maxAgeSeconds });
}

/** Starts a session, deleting `previousToken`'s (rotation: a planted cookie is never promoted); returns the raw token. */
export async function createSession(
  db: Db,
  clock: Clock,
  accountId: string,
  previousToken?: string,
): Promise<{ token: string; maxAgeSeconds: number }> {
  const token = randomToken();
  const now = clock.now();
  await db.transaction(async (tx) => {
    if (previousToken) await tx.delete(sessions).where(eq(sessions.tokenHash, sha256(previousToken)));
    await tx.delete(sessions).where(and(eq(sessions.accountId, accountId), lt(sessions.expiresAt, new Date(now))));
    await tx.insert(sessions).values({
      id: newId("ses"),
      tokenHash: sha256(token),
      accountId,
      csrfToken: randomToken(),
      createdAt: new Date(now),
      expiresAt: new Date(now + SESSION_TTL_MS),
    });
  });
  return { token, maxAgeSeconds: Math.floor(SESSION_TTL_MS / 1000) };
}

/** The live session behind a cookie token, with its account; undefined when unknown or expired. */
export async function resolveSession(
  db: Db,
  clock: Clock,
  token: string | undefined,
): Promise<DashboardSession | undefined> {
  if (!token || token.length > 100) return undefined;
  const rows = await db
    .select({
      id: sessions.id,
      csrfToken: sessions.csrfToken,
      expiresAt: sessions.expiresAt,
      accId: accounts.id,
      email: accounts.email,
      plan: accounts.plan,
      status: accounts.status,
    })
    .from(sessions)
    .innerJoin(accounts, eq(accounts.id, sessions.accountId))
    .where(and(eq(sessions.tokenHash, sha256(token)), gt(sessions.expiresAt, new Date(clock.now()))))
    .limit(1);
  const r = rows[0];
  if (!r) return undefined;
  return {
    id: r.id,
    csrfToken: r.csrfToken,
    expiresAt: r.expiresAt,
    account: { id: r.accId, email: r.email, plan: r.plan, status: r.status },
  };
}

/** Ends the session behind a cookie token (sign-out). */
export async function destroySession(db: Db, token: string | undefined): Promise<void> {
  if (token) await db.delete(sessions).where(eq(sessions.tokenHash, sha256(token)));
}

/** Deletes sessions expired before `nowMs` (ms; no retention: refused at once anyway); returns how many. */
export async function pruneSessions(db: Db, nowMs: number, batches: PruneBatches): Promise<number> {
  const sql = db.$client;
  const now = new Date(nowMs).toISOString();
  return deleteInBatches(
    batches,
    async () =>
      (
        await sql`
      delete from sessions where id in (
        select id from sessions where expires_at < ${now} limit ${batches.batchSize})
      returning 1`
      ).length,
  );
}
