/** Dashboard reads and the sign-in / sign-up rules, plain functions over the database. */
import { and, eq, gte, sql } from "drizzle-orm";
import type { AppDeps } from "../../deps.ts";
import type { Db } from "../../db/client.ts";
import { deliveries } from "../../db/schema/index.ts";
import { createAccount, EmailTakenError, findAccountByEmail, normaliseEmail } from "../accounts/service.ts";
import { hitFixedWindow } from "../accounts/rate-limit.ts";
import { clearAfterSuccess, refundAttempt, reserveAttempt } from "../accounts/signin-throttle.ts";
import { VerifyGate } from "./verify-gate.ts";
import { dummyPasswordHash, verifyPassword } from "../accounts/password.ts";

/** Sign-ups per IP per hour. */
const SIGNUP_MAX_PER_IP = 10;
/** The sign-up limit's window, ms (one hour, fixed). */
const SIGNUP_WINDOW_MS = 3_600_000;

/** Checks a password against an argon2id hash (default {@link verifyPassword}). */
type PasswordVerifier = (password: string, hash: string) => Promise<boolean>;

/** The process-wide limits on password hashing work the sign-in and sign-up paths share. */
export interface PasswordWork {
  gate: VerifyGate;
  verify: PasswordVerifier;
}

/** A gate with the default limits and the real verifier. */
export const defaultPasswordWork = (): PasswordWork => ({ gate: new VerifyGate(), verify: verifyPassword });

type Deps = Pick<AppDeps, "db" | "clock"> & { work: PasswordWork };

export type SignInResult =
  | { ok: true; accountId: string }
  | { ok: false; reason: "invalid" }
  | { ok: false; reason: "throttled"; retryAfterSeconds: number };

/** Retry hint when the verification gate is full: the burst is over in moments. */
const BUSY_RETRY_SECONDS = 2;

/** Checks email + password, unknown emails against a dummy hash (docs/dashboard.md#sign-in-throttling). */
export async function signIn(
  deps: Deps,
  input: { email: string; password: string; ip: string },
): Promise<SignInResult> {
  const email = normaliseEmail(input.email);
  const r = await reserveAttempt(deps.db, input.ip, email, deps.clock.now());
  if (!r.ok) return { ok: false, reason: "throttled", retryAfterSeconds: r.retryAfterSeconds };
  const acc = await findAccountByEmail(deps.db, email);
  const ran = await deps.work.gate.run(email, async () =>
    deps.work.verify(input.password, acc?.passwordHash ?? (await dummyPasswordHash())),
  );
  if (!ran) {
    // The password was never checked: the attempt does not count.
    await refundAttempt(deps.db, r);
    return { ok: false, reason: "throttled", retryAfterSeconds: BUSY_RETRY_SECONDS };
  }
  if (!ran.value || !acc?.passwordHash) return { ok: false, reason: "invalid" };
  await clearAfterSuccess(deps.db, r);
  return { ok: true, accountId: acc.id };
}

export type SignUpResult =
  | { ok: true; accountId: string; created: boolean }
  | { ok: false; reason: "taken" }
  | { ok: false; reason: "throttled"; retryAfterSeconds: number };

/**
 * Creates a `free` account (password policy checked by the caller); a taken email with that account's password
 * signs in instead, otherwise `taken`. Limited to {@link SIGNUP_MAX_PER_IP} an hour per IP; hashing runs in the gate.
 */
export async function signUp(
  deps: Deps,
  input: { email: string; password: string; ip: string },
): Promise<SignUpResult> {
  const d = await hitFixedWindow(
    deps.db,
    `signup:ip:${input.ip}`,
    SIGNUP_MAX_PER_IP,
    SIGNUP_WINDOW_MS,
    deps.clock.now(),
  );
  if (!d.allowed) return { ok: false, reason: "throttled", retryAfterSeconds: d.resetSeconds };
  const created = await deps.work.gate.run(normaliseEmail(input.email), async () => {
    try {
      return await createAccount(deps.db, { email: input.email, password: input.password, plan: "free" });
    } catch (e) {
      if (e instanceof EmailTakenError) return undefined;
      throw e;
    }
  });
  if (!created) return { ok: false, reason: "throttled", retryAfterSeconds: BUSY_RETRY_SECONDS };
  if (created.value) return { ok: true, accountId: created.value.id, created: true };
  const r = await signIn(deps, input);
  return r.ok ? { ...r, created: false } : r.reason === "throttled" ? r : { ok: false, reason: "taken" };
}

/** One UTC day (`YYYY-MM-DD`) of delivery counts. */
export interface DayCount {
  day: string;
  delivered: number;
  failed: number;
}

const CHART_DAYS = 14;

/**
 * Deliveries per UTC day enqueued over the last `days` UTC days (today included): `delivered`, `failed` (abandoned,
 * dropped); pending ones are not counted yet. `webhookId` null counts every webhook of the account.
 */
export async function deliveriesPerDay(
  db: Db,
  accountId: string,
  webhookId: string | null,
  nowMs: number,
  days = CHART_DAYS,
): Promise<DayCount[]> {
  const today = Date.UTC(new Date(nowMs).getUTCFullYear(), new Date(nowMs).getUTCMonth(), new Date(nowMs).getUTCDate());
  const from = today - (days - 1) * 86_400_000;
  const rows = await db
    .select({
      day: sql<string>`to_char(${deliveries.enqueuedAt} at time zone 'UTC', 'YYYY-MM-DD')`,
      delivered: sql<number>`count(*) filter (where ${deliveries.state} = 'delivered')::int`,
      failed: sql<number>`count(*) filter (where ${deliveries.state} in ('abandoned', 'dropped'))::int`,
    })
    .from(deliveries)
    .where(
      and(
        eq(deliveries.accountId, accountId),
        webhookId === null ? undefined : eq(deliveries.webhookId, webhookId),
        gte(deliveries.enqueuedAt, new Date(from)),
      ),
    )
    .groupBy(sql`1`);
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const out: DayCount[] = [];
  for (let i = 0; i < days; i++) {
    const day = new Date(from + i * 86_400_000).toISOString().slice(0, 10);
    const r = byDay.get(day);
    out.push({ day, delivered: Number(r?.delivered ?? 0), failed: Number(r?.failed ?? 0) });
  }
  return out;
}
