/** The sign-in throttle, shared by replicas (docs/dashboard.md#sign-in-throttling). */
import { sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import { windowStart } from "./rate-limit.ts";

/** Window of the failure counters. */
const SIGNIN_WINDOW_MS = 15 * 60_000;
/** Failed attempts per client address and account per window. */
export const SIGNIN_MAX_FAILURES = 10;
/** Failed attempts per client address (all accounts) per window. */
export const SIGNIN_MAX_FAILURES_PER_IP = 30;
/** Attempts on one account (all addresses) per window before it is slowed. */
export const SIGNIN_SLOW_AFTER = 50;
/** Once slowed, one attempt per account per this many milliseconds. */
export const SIGNIN_SLOW_INTERVAL_MS = 2_000;

/** The counters one attempt touches. */
interface AttemptKeys {
  pair: string;
  ip: string;
  account: string;
  slow: string;
}

/** Counter keys in `rate_windows` for an attempt on `email` (normalised) from client address `ip`. */
const attemptKeys = (ip: string, email: string): AttemptKeys => ({
  pair: `signin:pair:${ip}|${email}`,
  ip: `signin:ip:${ip}`,
  account: `signin:acct:${email}`,
  slow: `signin:slow:${email}`,
});

export type Reservation =
  | { ok: true; keys: AttemptKeys; windowStartMs: number }
  | { ok: false; retryAfterSeconds: number; by: "pair" | "ip" | "slow" };

const secondsUntil = (endMs: number, nowMs: number) => Math.max(1, Math.ceil((endMs - nowMs) / 1000));

/** Reserves one attempt for `email` from `ip` at `nowMs`, or says which limit refused it and when to retry. */
export async function reserveAttempt(db: Db, ip: string, email: string, nowMs: number): Promise<Reservation> {
  const keys = attemptKeys(ip, email);
  const ws = windowStart(nowMs, SIGNIN_WINDOW_MS);
  const slowWs = windowStart(nowMs, SIGNIN_SLOW_INTERVAL_MS);
  // Chained CTEs: a counter is bumped only when every earlier one admitted the attempt (a DO UPDATE … WHERE that is
  // false returns no row). ON CONFLICT re-checks WHERE under the row lock, so two attempts never share the last slot.
  return db.transaction(async (tx) => {
    await lockAccountCounters(tx, keys);
    const rows = await tx.execute<{
      pair: number | null;
      ip: number | null;
      acct: number | null;
      slow: number | null;
    }>(sql`
      with pair as (
        insert into rate_windows as w (key, window_start, count) values (${keys.pair}, ${new Date(ws).toISOString()}::timestamptz, 1)
        on conflict (key, window_start) do update set count = w.count + 1 where w.count < ${SIGNIN_MAX_FAILURES}
        returning w.count
      ), ip as (
        insert into rate_windows as w (key, window_start, count) select ${keys.ip}, ${new Date(ws).toISOString()}::timestamptz, 1 from pair
        on conflict (key, window_start) do update set count = w.count + 1 where w.count < ${SIGNIN_MAX_FAILURES_PER_IP}
        returning w.count
      ), acct as (
        insert into rate_windows as w (key, window_start, count) select ${keys.account}, ${new Date(ws).toISOString()}::timestamptz, 1 from ip
        on conflict (key, window_start) do update set count = w.count + 1
        returning w.count
      ), slow as (
        insert into rate_windows as w (key, window_start, count)
        select ${keys.slow}, ${new Date(slowWs).toISOString()}::timestamptz, 1 from acct where acct.count > ${SIGNIN_SLOW_AFTER}
        on conflict (key, window_start) do update set count = w.count + 1 where w.count < 1
        returning w.count
      )
      select (select count from pair) as pair, (select count from ip) as ip, (select count from acct) as acct, (select count from slow) as slow`);
    const r = rows[0];
    if (r?.pair == null)
      return { ok: false, by: "pair", retryAfterSeconds: secondsUntil(ws + SIGNIN_WINDOW_MS, nowMs) };
    if (r.ip == null) return { ok: false, by: "ip", retryAfterSeconds: secondsUntil(ws + SIGNIN_WINDOW_MS, nowMs) };
    if (Number(r.acct) > SIGNIN_SLOW_AFTER && r.slow == null) {
      // Slowed, not refused for the window: give back what this statement counted.
      await giveBack(tx, { ok: true, keys, windowStartMs: ws });
      return { ok: false, by: "slow", retryAfterSeconds: secondsUntil(slowWs + SIGNIN_SLOW_INTERVAL_MS, nowMs) };
    }
    return { ok: true, keys, windowStartMs: ws };
  });
}

/**
 * Serialises one account's counter writes for the rest of `tx`: a multi-row UPDATE locks in scan order and could
 * deadlock against a reservation's pair → ip → account order (seen with 40 concurrent sign-ins).
 */
async function lockAccountCounters(tx: DbOrTx, keys: AttemptKeys): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${keys.account}, 0))`);
}

async function giveBack(tx: DbOrTx, r: Extract<Reservation, { ok: true }>): Promise<void> {
  const ws = new Date(r.windowStartMs).toISOString();
  await tx.execute(sql`
    update rate_windows set count = greatest(count - 1, 0)
    where window_start = ${ws}::timestamptz and key in (${r.keys.pair}, ${r.keys.ip}, ${r.keys.account})`);
}

/** Gives a reservation back without a verdict (the password was not checked). */
export async function refundAttempt(db: Db, r: Extract<Reservation, { ok: true }>): Promise<void> {
  await db.transaction(async (tx) => {
    await lockAccountCounters(tx, r.keys);
    await giveBack(tx, r);
  });
}

/** After the right password: clears this address's failures on the account and gives the attempt back. */
export async function clearAfterSuccess(db: Db, r: Extract<Reservation, { ok: true }>): Promise<void> {
  const ws = new Date(r.windowStartMs).toISOString();
  await db.transaction(async (tx) => {
    await lockAccountCounters(tx, r.keys);
    await tx.execute(sql`
      with cleared as (delete from rate_windows where key = ${r.keys.pair})
      update rate_windows set count = greatest(count - 1, 0)
      where window_start = ${ws}::timestamptz and key in (${r.keys.ip}, ${r.keys.account})`);
  });
}
