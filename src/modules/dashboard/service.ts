/**
 * Dashboard reads and the sign-in / sign-up rules. Plain functions over the
 * database (no request context); the routes render what these return.
 */
import { and, desc, eq, gte, sql } from "drizzle-orm";
import type { AppDeps } from "../../app.ts";
import type { Db } from "../../db/client.ts";
import { deliveries, follows, rateWindows, shipments } from "../../db/schema/index.ts";
import { createAccount, EmailTakenError, findAccountByEmail, normaliseEmail } from "../accounts/service.ts";
import { hitFixedWindow } from "../accounts/rate-limit.ts";

type Deps = Pick<AppDeps, "db" | "clock">;

/** Sign-in throttle window and limits (failed attempts per window). */
export const SIGNIN_WINDOW_MS = 15 * 60_000;
export const SIGNIN_MAX_FAILURES_PER_ACCOUNT = 10;
export const SIGNIN_MAX_FAILURES_PER_IP = 30;
/** Sign-ups per IP per hour. */
export const SIGNUP_MAX_PER_IP = 10;

let dummyHash: Promise<string> | undefined;
/** An argon2id hash to verify against when the email is unknown, so both paths cost the same. */
const dummy = () => (dummyHash ??= Bun.password.hash(crypto.randomUUID(), { algorithm: "argon2id" }));

/** Current count of a fixed window without counting a hit. */
async function peekWindow(db: Db, key: string, windowMs: number, nowMs: number): Promise<number> {
  const start = new Date(Math.floor(nowMs / windowMs) * windowMs);
  const rows = await db.select({ n: rateWindows.count }).from(rateWindows).where(and(eq(rateWindows.key, key), eq(rateWindows.windowStart, start)));
  return rows[0]?.n ?? 0;
}

export type SignInResult = { ok: true; accountId: string } | { ok: false; reason: "invalid" } | { ok: false; reason: "throttled"; retryAfterSeconds: number };

/**
 * Checks email + password. Failed attempts are counted per account (the
 * normalised email, whether or not it exists, so the throttle itself reveals
 * nothing) and per client IP in {@link SIGNIN_WINDOW_MS} windows; at the
 * limit every attempt is refused, even with the right password, until the
 * window ends. Unknown emails verify against a dummy hash (same cost).
 */
export async function signIn(deps: Deps, input: { email: string; password: string; ip: string }): Promise<SignInResult> {
  const now = deps.clock.now();
  const email = normaliseEmail(input.email);
  const accKey = `signin:acct:${email}`;
  const ipKey = `signin:ip:${input.ip}`;
  const [perAcc, perIp] = await Promise.all([peekWindow(deps.db, accKey, SIGNIN_WINDOW_MS, now), peekWindow(deps.db, ipKey, SIGNIN_WINDOW_MS, now)]);
  const retryAfterSeconds = Math.max(1, Math.ceil((Math.floor(now / SIGNIN_WINDOW_MS) * SIGNIN_WINDOW_MS + SIGNIN_WINDOW_MS - now) / 1000));
  if (perAcc >= SIGNIN_MAX_FAILURES_PER_ACCOUNT || perIp >= SIGNIN_MAX_FAILURES_PER_IP) return { ok: false, reason: "throttled", retryAfterSeconds };
  const acc = await findAccountByEmail(deps.db, email);
  const ok = acc?.passwordHash ? await Bun.password.verify(input.password, acc.passwordHash) : (await Bun.password.verify(input.password, await dummy()), false);
  if (ok && acc) return { ok: true, accountId: acc.id };
  await hitFixedWindow(deps.db, accKey, SIGNIN_MAX_FAILURES_PER_ACCOUNT, SIGNIN_WINDOW_MS, now);
  await hitFixedWindow(deps.db, ipKey, SIGNIN_MAX_FAILURES_PER_IP, SIGNIN_WINDOW_MS, now);
  return { ok: false, reason: "invalid" };
}

export type SignUpResult = { ok: true; accountId: string; created: boolean } | { ok: false; reason: "taken" } | { ok: false; reason: "throttled"; retryAfterSeconds: number };

/**
 * Creates a `free` account (CONTRACT 9). When the email is taken and the
 * password is that account's, it signs in instead; otherwise `taken`.
 * Sign-ups are limited to {@link SIGNUP_MAX_PER_IP} per hour per IP.
 */
export async function signUp(deps: Deps, input: { email: string; password: string; ip: string }): Promise<SignUpResult> {
  const d = await hitFixedWindow(deps.db, `signup:ip:${input.ip}`, SIGNUP_MAX_PER_IP, 3_600_000, deps.clock.now());
  if (!d.allowed) return { ok: false, reason: "throttled", retryAfterSeconds: d.resetSeconds };
  try {
    const acc = await createAccount(deps.db, { email: input.email, password: input.password, plan: "free" });
    return { ok: true, accountId: acc.id, created: true };
  } catch (e) {
    if (!(e instanceof EmailTakenError)) throw e;
    const r = await signIn(deps, input);
    return r.ok ? { ...r, created: false } : r.reason === "throttled" ? r : { ok: false, reason: "taken" };
  }
}

/** The account's followed shipments, newest follow first (at most 500). */
export async function listFollowedShipments(db: Db, accountId: string) {
  return db
    .select({
      courier: shipments.courier,
      trackingNumber: shipments.trackingNumber,
      state: shipments.state,
      mostRecentStatus: shipments.mostRecentStatus,
      terminal: shipments.terminal,
      followMode: shipments.followMode,
      lastCheckedAt: shipments.lastCheckedAt,
      nextCheckAt: shipments.nextCheckAt,
      followedAt: follows.createdAt,
    })
    .from(follows)
    .innerJoin(shipments, eq(shipments.id, follows.shipmentId))
    .where(eq(follows.accountId, accountId))
    .orderBy(desc(follows.createdAt))
    .limit(500);
}

export interface DayCount {
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  delivered: number;
  failed: number;
}

export const CHART_DAYS = 14;

/**
 * Deliveries per UTC day for the last {@link CHART_DAYS} days (today
 * included), by the day the delivery was enqueued: `delivered`, and
 * `failed` = abandoned after the last attempt or dropped by the address
 * check. Pending deliveries are not counted yet. Days without deliveries
 * are present with zeros.
 */
export async function deliveriesPerDay(db: Db, accountId: string, webhookId: string, nowMs: number): Promise<DayCount[]> {
  const today = Date.UTC(new Date(nowMs).getUTCFullYear(), new Date(nowMs).getUTCMonth(), new Date(nowMs).getUTCDate());
  const from = today - (CHART_DAYS - 1) * 86_400_000;
  const rows = await db
    .select({
      day: sql<string>`to_char(${deliveries.enqueuedAt} at time zone 'UTC', 'YYYY-MM-DD')`,
      delivered: sql<number>`count(*) filter (where ${deliveries.state} = 'delivered')::int`,
      failed: sql<number>`count(*) filter (where ${deliveries.state} in ('abandoned', 'dropped'))::int`,
    })
    .from(deliveries)
    .where(and(eq(deliveries.accountId, accountId), eq(deliveries.webhookId, webhookId), gte(deliveries.enqueuedAt, new Date(from))))
    .groupBy(sql`1`);
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const out: DayCount[] = [];
  for (let i = 0; i < CHART_DAYS; i++) {
    const day = new Date(from + i * 86_400_000).toISOString().slice(0, 10);
    const r = byDay.get(day);
    out.push({ day, delivered: Number(r?.delivered ?? 0), failed: Number(r?.failed ?? 0) });
  }
  return out;
}
