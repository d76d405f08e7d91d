/**
 * Monthly quota units leased in small blocks (spec: Rate limits, "each tracking request counts against a monthly
 * quota"): one statement takes a block from the month row under its row lock, units go out one per `/v1/track` from
 * memory, and the row counts every unit granted, so 200s never exceed the quota.
 * Why and bounds: docs/performance.md#decisions ("The monthly quota, leased in blocks"), docs/billing.md.
 */
import type { Db } from "../../db/client.ts";
import { untilDeadline, withoutDeadline } from "../../lib/deadline.ts";
import { defined } from "../../lib/defined.ts";
import { quotaMarksCte } from "../alerts/record.ts";
import { quotaLeaseFailure } from "../metrics/registry.ts";
import { idlePeriodMs, LEASE_IDLE_MAX_MS, LEASE_IDLE_MS, paced, type Pace } from "./quota-pace.ts";
import { addUnits, dayOf, unitsOf, type DayUnits } from "./quota-days.ts";
import { periodOf, usedThisMonth, type Reservation } from "./quota.ts";

/** Remaining units per leased unit: a block is at most 1/LEASE_DIVISOR of what is left. */
const LEASE_DIVISOR = 1_000;
/** Largest block, units. */
export const LEASE_MAX = 32;
/** What this process last saw of a row is forgotten this long after its last use (longer than any answer takes), ms. */
const SEEN_KEEP_MS = 5 * 60_000;

interface Lease {
  period: string;
  /** `YYYY-MM-DD` the block was granted: its units count on that day in `usage_daily`. */
  day: string;
  quota: number;
  size: number;
  taken: number;
  lastUseMs: number;
  /** The account's recent longest gap between requests (decaying), ms. */
  gapMs: number;
}

/** Key of one month row: account id and `YYYY-MM`. */
const rowKey = (accountId: string, period: string) => `${accountId} ${period}`;

class QuotaLeases {
  private readonly leases = new Map<string, Lease>();
  private readonly pending = new Map<string, Promise<void>>();
  /** Units this process counted in rows and neither holds nor used, waiting to go back, per row and day (summed). */
  private readonly owed: DayUnits = new Map();
  /** Units of a give-back statement in flight. */
  private readonly returning: DayUnits = new Map();
  /** Pace of accounts whose block went back idle: their next block starts from it. */
  private readonly paces = new Map<string, Pace>();
  /** Each row's count as this process last saw it (the last of its own statements on the row to finish). */
  private readonly seen = new Map<string, { used: number; atMs: number }>();
  /** Tail of this process's statements on each account's rows: they run one at a time, in order. */
  private readonly turns = new Map<string, Promise<void>>();
  private sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly db: Db) {}

  /** Reserves one unit of the monthly `quota` for the month of `nowMs`; `ok: false` when used up; throws driver errors. */
  reserve(accountId: string, quota: number, nowMs: number): Reservation | Promise<Reservation> {
    const period = periodOf(nowMs);
    return this.take(accountId, quota, period) ?? this.reserveSlow(accountId, quota, nowMs, period, dayOf(nowMs));
  }

  /**
   * Units of `period` counted and not given back as this process knows: the row's count at its last statement minus
   * units it holds or owes. Undefined after {@link SEEN_KEEP_MS} untouched.
   */
  usedNow(accountId: string, period: string): number | undefined {
    const k = rowKey(accountId, period);
    const seen = this.seen.get(k);
    if (!seen) return undefined;
    const l = this.leases.get(accountId);
    const unused = l && l.period === period ? l.size - l.taken : 0;
    return Math.max(0, seen.used - unused - unitsOf(this.owed, k) - unitsOf(this.returning, k));
  }

  /** Runs `change` (a bulk follow) in turn with this process's statements on the rows, remembering its `used`. */
  async counting<T>(accountId: string, period: string, change: () => Promise<{ used: number; value: T }>): Promise<T> {
    return this.inTurn([accountId], async () => {
      const r = await change();
      this.see(accountId, period, r.used);
      return r.value;
    });
  }

  private take(accountId: string, quota: number, period: string): Reservation | undefined {
    const l = this.leases.get(accountId);
    if (!l || l.period !== period || l.quota !== quota || l.taken >= l.size) return undefined;
    l.taken++;
    const now = Date.now();
    // The first unit of a block was asked for by the request that took the block: its gap is already counted.
    if (l.taken > 1) l.gapMs = paced(l, now);
    l.lastUseMs = now;
    // A lease is granted together with its row's count (`see`).
    return { ok: true, used: defined(this.usedNow(accountId, period), "the leased row's count"), period, day: l.day };
  }

  private async reserveSlow(
    accountId: string,
    quota: number,
    nowMs: number,
    period: string,
    day: string,
  ): Promise<Reservation> {
    if (quota <= 0) return { ok: false, used: await usedThisMonth(this.db, accountId, nowMs), period, day };
    for (;;) {
      const inFlight = this.pending.get(accountId);
      if (inFlight) {
        await untilDeadline(inFlight);
      } else {
        // The grant runs off the request's deadline and is awaited only until it: a late block is kept, not lost.
        const p = withoutDeadline(() => this.grant(accountId, quota, period, day, nowMs)).finally(() =>
          this.pending.delete(accountId),
        );
        this.pending.set(
          accountId,
          p.then(
            () => undefined,
            () => undefined,
          ),
        );
        if (!(await untilDeadline(p))) return { ok: false, used: this.usedNow(accountId, period) ?? 0, period, day };
      }
      const taken = this.take(accountId, quota, period);
      if (taken) return taken;
    }
  }

  /** Takes a block from the row (created at 0 when missing); false when the quota is used up. */
  private async grant(accountId: string, quota: number, period: string, day: string, nowMs: number): Promise<boolean> {
    const old = this.leases.get(accountId);
    if (old) {
      this.leases.delete(accountId);
      this.owe(accountId, old);
      await this.flush();
    }
    return this.inTurn([accountId], async () => {
      for (let attempt = 0; ; attempt++) {
        // `o` locks the row, so grants never overlap; no WAL flush wait (a crash loses free units, never refuses).
        // `d` counts the block on its day after `g` locks the month row; `alerted`: docs/alerts.md.
        const [row] = await this.db.$client<{ current: number | null; before: number | null; after: number | null }[]>`
          with _ as (select set_config('synchronous_commit', 'off', true)),
          o as (select used from usage_counters where account_id = ${accountId} and period = ${period} for update),
          g as (
            update usage_counters u
            set used = o.used + least(greatest((${quota} - o.used) / ${LEASE_DIVISOR}, 1), ${LEASE_MAX}, ${quota} - o.used)
            from _, o
            where u.account_id = ${accountId} and u.period = ${period} and o.used < ${quota}
            returning o.used as before, u.used as after),
          d as (
            insert into usage_daily (account_id, day, used) select ${accountId}, ${day}::date, g.after - g.before from g
            on conflict (account_id, day) do update set used = usage_daily.used + excluded.used),
          alerted as (${quotaMarksCte(this.db.$client, this.db.$client`select before, after from g`, accountId, period, quota, nowMs)})
          select (select used from o) as current, g.before, g.after from (select 1) as one left join g on true`;
        const r = defined(row, "the grant statement's row");
        if (r.before !== null && r.after !== null) {
          const after = Number(r.after);
          const now = Date.now();
          const gapMs = paced(old ?? this.paces.get(accountId), now);
          this.paces.delete(accountId);
          this.leases.set(accountId, {
            period,
            day,
            quota,
            size: after - Number(r.before),
            taken: 0,
            lastUseMs: now,
            gapMs,
          });
          this.see(accountId, period, after);
          this.startSweeper();
          return true;
        }
        if (r.current !== null || attempt > 0) {
          this.see(accountId, period, Number(r.current ?? 0));
          return false;
        }
        await this.db
          .$client`insert into usage_counters (account_id, period, used) values (${accountId}, ${period}, 0) on conflict do nothing`;
      }
    }).catch((err: unknown) => Promise.reject(quotaLeaseFailure("grant", err)));
  }

  /** Gives back the unit of a reservation that did not end in 200; on a driver error it stays owed for later. */
  async release(accountId: string, reservation: Reservation): Promise<void> {
    addUnits(this.owed, rowKey(accountId, reservation.period), reservation.day, 1);
    await this.flush();
  }

  /** Returns the unused units of every block (shutdown), ONE statement. */
  async returnAll(): Promise<void> {
    for (const [accountId, lease] of this.leases) this.owe(accountId, lease);
    this.leases.clear();
    this.stopSweeper();
    await this.flush();
  }

  /** Returns blocks unused for their {@link idlePeriodMs}, and units still owed, in ONE statement. */
  async returnIdle(nowMs = Date.now()): Promise<void> {
    for (const [accountId, l] of this.leases)
      if (nowMs - l.lastUseMs >= idlePeriodMs(l.gapMs)) {
        this.leases.delete(accountId);
        this.owe(accountId, l);
        this.paces.set(accountId, { lastUseMs: l.lastUseMs, gapMs: l.gapMs });
      }
    for (const [a, p] of this.paces) if (nowMs - p.lastUseMs >= LEASE_IDLE_MAX_MS) this.paces.delete(a);
    for (const [k, s] of this.seen)
      if (nowMs - s.atMs >= SEEN_KEEP_MS && !this.owed.has(k) && !this.returning.has(k)) this.seen.delete(k);
    if (this.leases.size === 0 && this.owed.size === 0 && this.seen.size === 0 && this.paces.size === 0)
      this.stopSweeper();
    await this.flush();
  }

  private owe(accountId: string, lease: Lease): void {
    if (lease.size > lease.taken)
      addUnits(this.owed, rowKey(accountId, lease.period), lease.day, lease.size - lease.taken);
  }

  private see(accountId: string, period: string, used: number): void {
    this.seen.set(rowKey(accountId, period), { used, atMs: Date.now() });
  }

  /** Sends owed units back, ONE statement, one entry per row (UPDATE applies one FROM entry per row); failed: owed still. */
  private async flush(): Promise<void> {
    if (this.owed.size === 0) return;
    // Same row order in every replica: two give-backs touching the same rows cannot deadlock.
    const batch = [...this.owed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    this.owed.clear();
    const split = batch.map(([k, days]) => ({
      k,
      accountId: k.slice(0, k.lastIndexOf(" ")),
      period: k.slice(k.lastIndexOf(" ") + 1),
      days: [...days],
    }));
    const each = (f: (k: string, day: string, n: number) => void) => {
      for (const b of split) for (const [day, n] of b.days) f(b.k, day, n);
    };
    each((k, day, n) => addUnits(this.returning, k, day, n));
    const perDay = split.flatMap((b) => b.days.map(([day, n]) => ({ a: b.accountId, day, n })));
    try {
      // `d` joins the month rows `m` updated: a day row is locked after its month row, as in a grant.
      const rows = await this.inTurn(
        [...new Set(split.map((b) => b.accountId))],
        () =>
          this.db.$client<{ account_id: string; period: string; used: number }[]>`
          with _ as (select set_config('synchronous_commit', 'off', true)),
          m as (
            update usage_counters u set used = greatest(u.used - b.n, 0)
            from _, unnest(${split.map((b) => b.accountId)}::text[], ${split.map((b) => b.period)}::text[], ${split.map((b) => b.days.reduce((t, [, n]) => t + n, 0))}::int[]) as b(a, p, n)
            where u.account_id = b.a and u.period = b.p
            returning u.account_id, u.period, u.used),
          d as (
            update usage_daily u set used = greatest(u.used - b.n, 0)
            from m, unnest(${perDay.map((b) => b.a)}::text[], ${perDay.map((b) => b.day)}::text[], ${perDay.map((b) => b.n)}::int[]) as b(a, d, n)
            where m.account_id = b.a and m.period = left(b.d, 7) and u.account_id = b.a and u.day = b.d::date)
          select account_id, period, used from m`,
      );
      each((k, day, n) => addUnits(this.returning, k, day, -n));
      for (const r of rows) this.see(r.account_id, r.period, Number(r.used));
    } catch (err) {
      each((k, day, n) => {
        addUnits(this.returning, k, day, -n);
        addUnits(this.owed, k, day, n);
      });
      this.startSweeper();
      throw quotaLeaseFailure("return", err);
    }
  }

  /** Runs `fn` after this process's earlier statements on `accounts`' rows, so {@link seen} follows the row. */
  private async inTurn<T>(accounts: string[], fn: () => Promise<T>): Promise<T> {
    const before = accounts.map((a) => this.turns.get(a)).filter((p) => p !== undefined);
    let done!: () => void;
    const mine = new Promise<void>((r) => (done = r));
    for (const a of accounts) this.turns.set(a, mine);
    try {
      await Promise.all(before);
      return await fn();
    } finally {
      done();
      for (const a of accounts) if (this.turns.get(a) === mine) this.turns.delete(a);
    }
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    // Started by a request's grant or give-back: its ticks must not inherit that request's deadline.
    this.sweeper = withoutDeadline(() =>
      setInterval(() => void this.returnIdle().catch(() => undefined), LEASE_IDLE_MS),
    );
    this.sweeper.unref?.();
  }

  private stopSweeper(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }
}

export { QuotaLeases };
