/**
 * Monthly quota units leased in small blocks (spec: Rate limits, "each tracking request counts against a
 * monthly quota"; docs/performance.md, "The monthly quota, leased in blocks").
 *
 * A process takes a block of units from the account's month row in ONE prepared statement and hands them
 * out one per `/v1/track` request without a database round trip. The block's size follows what is left:
 * `clamp(floor(remaining / LEASE_DIVISOR), 1, LEASE_MAX)` — one unit when fewer than 2 × LEASE_DIVISOR
 * are left, so the last units of a month go one at a time exactly as before.
 *
 * What stays exact: the month row counts every unit granted to any replica, under the row lock, so the
 * sum of 200 answers never exceeds the quota, across any number of replicas. A request that does not end
 * in 200 gives its unit back to the row.
 *
 * What the blocks cost, and the bounds:
 * - Units a replica holds and has not used count as used in the row until they go back: after
 *   {@link LEASE_IDLE_MS} without use, when the quota or the month changes, and on shutdown
 *   ({@link QuotaLeases.returnAll}). So another replica can refuse a request with 402 while up to
 *   LEASE_MAX − 1 units wait, for at most LEASE_IDLE_MS — only in the last 2 × LEASE_DIVISOR × LEASE_MAX
 *   units of a month, since smaller remainders lease one unit.
 * - A replica killed without its shutdown loses the units it held (≤ LEASE_MAX − 1 per account it served
 *   in its last LEASE_IDLE_MS): they stay counted as used for that month.
 * - `usage.used` in an answer is the row's count when the block was granted plus the units of the block
 *   handed out so far: units other replicas hold are included, units given back since are not taken off.
 */
import type { Db } from "../../db/client.ts";
import { periodOf, usedThisMonth, type Reservation } from "./quota.ts";

/** Remaining units per leased unit: a block is at most 1/LEASE_DIVISOR of what is left. */
export const LEASE_DIVISOR = 1_000;
/** Largest block, units. */
export const LEASE_MAX = 32;
/** Unused units go back to the row after this long without use, ms. */
export const LEASE_IDLE_MS = 1_000;

interface Lease {
  period: string;
  quota: number;
  /** The row's count before this block was granted. */
  base: number;
  size: number;
  /** Units of the block handed out (and not given back). */
  taken: number;
  lastUseMs: number;
}

class QuotaLeases {
  private readonly leases = new Map<string, Lease>();
  private readonly pending = new Map<string, Promise<void>>();
  /** Units a failed give-back still owes to their rows. */
  private owed: { accountId: string; period: string; units: number }[] = [];
  private sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly db: Db) {}

  /**
   * Reserves one unit of `accountId`'s quota for the UTC month of `nowMs` (ms since the epoch).
   * @param quota the plan's monthly quota (0: nothing can be reserved).
   * @returns the reservation at once when this process holds a unit, else after one statement;
   *   `ok: false` (with the row's count) when the month's quota is used up.
   * @throws the driver's error when PostgreSQL cannot be reached.
   */
  reserve(accountId: string, quota: number, nowMs: number): Reservation | Promise<Reservation> {
    const period = periodOf(nowMs);
    return this.take(accountId, quota, period) ?? this.reserveSlow(accountId, quota, nowMs, period);
  }

  /** One unit of the block this process holds for the account, month and quota, or undefined. */
  private take(accountId: string, quota: number, period: string): Reservation | undefined {
    const l = this.leases.get(accountId);
    if (!l || l.period !== period || l.quota !== quota || l.taken >= l.size) return undefined;
    l.taken++;
    l.lastUseMs = Date.now();
    return { ok: true, used: l.base + l.taken, period };
  }

  private async reserveSlow(accountId: string, quota: number, nowMs: number, period: string): Promise<Reservation> {
    if (quota <= 0) return { ok: false, used: await usedThisMonth(this.db, accountId, nowMs), period };
    for (;;) {
      // One block request per account at a time; the others wait for it and take from it.
      const inFlight = this.pending.get(accountId);
      if (inFlight) {
        await inFlight;
      } else {
        // Forgotten as soon as it settles, before anyone waiting on it runs again.
        const p = this.grant(accountId, quota, period).finally(() => this.pending.delete(accountId));
        this.pending.set(accountId, p.then(() => undefined, () => undefined));
        const granted = await p;
        if (granted !== true) return { ok: false, used: granted, period };
      }
      const taken = this.take(accountId, quota, period);
      if (taken) return taken;
    }
  }

  /**
   * Takes a block from the row, creating the month's row at 0 when missing.
   * @returns true when a block is held, else the row's count (the quota is used up).
   */
  private async grant(accountId: string, quota: number, period: string): Promise<true | number> {
    const old = this.leases.get(accountId);
    if (old) {
      this.leases.delete(accountId);
      await this.giveBack([{ accountId, lease: old }]);
    }
    for (let attempt = 0; ; attempt++) {
      // `o` locks the row and reads the count the block starts from (a row locked FOR UPDATE is re-read after
      // waiting), so concurrent grants never overlap; when the quota is used up it still reports the count.
      // `set_config(…, true)` is SET LOCAL for this statement's own transaction: it does not wait for its WAL
      // flush (a database crash can lose the last few hundred ms of grants: free units, never a wrong refusal).
      const [r] = await this.db.$client<{ current: number | null; before: number | null; after: number | null }[]>`
        with _ as (select set_config('synchronous_commit', 'off', true)),
        o as (select used from usage_counters where account_id = ${accountId} and period = ${period} for update),
        g as (
          update usage_counters u
          set used = o.used + least(greatest((${quota} - o.used) / ${LEASE_DIVISOR}, 1), ${LEASE_MAX}, ${quota} - o.used)
          from _, o
          where u.account_id = ${accountId} and u.period = ${period} and o.used < ${quota}
          returning o.used as before, u.used as after)
        select (select used from o) as current, g.before, g.after from (select 1) as one left join g on true`;
      if (r!.before !== null && r!.after !== null) {
        const base = Number(r!.before);
        this.leases.set(accountId, { period, quota, base, size: Number(r!.after) - base, taken: 0, lastUseMs: Date.now() });
        this.startSweeper();
        return true;
      }
      if (r!.current !== null || attempt > 0) return Number(r!.current ?? 0);
      // No row for the month yet (another replica may be creating it at the same moment): create it, try again.
      await this.db.$client`insert into usage_counters (account_id, period, used) values (${accountId}, ${period}, 0) on conflict do nothing`;
    }
  }

  /**
   * Gives back the unit of a reservation that did not end in 200, to the month's row (the block it came
   * from goes on handing out its other units).
   * @throws the driver's error when PostgreSQL cannot be reached.
   */
  async release(accountId: string, reservation: Reservation): Promise<void> {
    await this.giveBack([{ accountId, lease: { period: reservation.period, quota: 0, base: 0, size: 1, taken: 0, lastUseMs: 0 } }]);
  }

  /** Returns the unused units of every block (shutdown), ONE statement. */
  async returnAll(): Promise<void> {
    const all = [...this.leases].map(([accountId, lease]) => ({ accountId, lease }));
    this.leases.clear();
    this.stopSweeper();
    await this.giveBack(all);
  }

  /** Returns the blocks unused for {@link LEASE_IDLE_MS}. */
  async returnIdle(nowMs = Date.now()): Promise<void> {
    const idle = [...this.leases].filter(([, l]) => nowMs - l.lastUseMs >= LEASE_IDLE_MS).map(([accountId, lease]) => ({ accountId, lease }));
    for (const { accountId } of idle) this.leases.delete(accountId);
    if (this.leases.size === 0 && this.owed.length === 0) this.stopSweeper();
    await this.giveBack(idle);
  }

  /**
   * Gives the unused units of `items` back to their rows, ONE statement. Units a failed statement could not
   * give back are kept and sent again with the next call (the idle sweep, shutdown), then the error is thrown.
   */
  private async giveBack(items: { accountId: string; lease: Lease }[]): Promise<void> {
    const back = [...this.owed, ...items.filter((i) => i.lease.size > i.lease.taken).map((i) => ({ accountId: i.accountId, period: i.lease.period, units: i.lease.size - i.lease.taken }))];
    this.owed = [];
    if (back.length === 0) return;
    // Same row order in every replica: two give-backs touching the same rows cannot deadlock.
    back.sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : a.period < b.period ? -1 : a.period > b.period ? 1 : 0));
    try {
      await this.db.$client`
        with _ as (select set_config('synchronous_commit', 'off', true))
        update usage_counters u set used = greatest(u.used - b.n, 0)
        from _, unnest(${back.map((i) => i.accountId)}::text[], ${back.map((i) => i.period)}::text[], ${back.map((i) => i.units)}::int[]) as b(a, p, n)
        where u.account_id = b.a and u.period = b.p`;
    } catch (err) {
      this.owed = [...this.owed, ...back];
      if (this.owed.length > 0) this.startSweeper();
      throw err;
    }
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => void this.returnIdle().catch(() => undefined), LEASE_IDLE_MS);
    // Never keeps a process alive on its own.
    this.sweeper.unref?.();
  }

  private stopSweeper(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }
}

const byPool = new WeakMap<Db, QuotaLeases>();

/** The quota blocks of this pool (one per process and database, i.e. one per replica). */
export function quotaLeasesFor(db: Db): QuotaLeases {
  let q = byPool.get(db);
  if (!q) byPool.set(db, (q = new QuotaLeases(db)));
  return q;
}

export type { QuotaLeases };
