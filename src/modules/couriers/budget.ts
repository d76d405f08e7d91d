/** Courier rate budgets shared by every process (docs/capacity.md#courier-rate-budgets). */
import { createHash } from "node:crypto";
import type { RateLimit } from "../../config/index.ts";
import type { Db } from "../../db/client.ts";
import { systemTimers, type Clock, type Timers } from "../../lib/clock.ts";
import type { AdapterId } from "./catalogue.ts";
import { CARRIERS } from "./carriers/index.ts";
import { countBudgetRefusal } from "../metrics/registry.ts";
import { CourierBusyError } from "./lane.ts";

export type { RateLimit };

/** Defaults from each courier's published limits (its folder's `rateLimit`, carriers/index.ts); live backends only. */
export const DEFAULT_RATE_LIMITS = Object.fromEntries(CARRIERS.map((c) => [c.id, c.rateLimit])) as Readonly<
  Record<AdapterId, RateLimit>
>;

/** Seconds of rate the shared bucket holds at most (its burst). */
const BURST_SECONDS = 1;
/** A slice is at most this many seconds of rate, so one statement serves several calls of a busy backend. */
const SLICE_SECONDS = 0.1;
/** A slice's tokens not used within this long are dropped (they stay counted: under-use, never overshoot), ms. */
export const SLICE_TTL_MS = 250;
/** Longest a live lookup waits for a token before 503 COURIER_BUSY, ms. */
const LIVE_WAIT_MS = 1_000;
/** Longest a re-check waits for a token before it is recorded as `rate_limited` and backs off, ms. */
const RECHECK_WAIT_MS = 30_000;

/** Who calls: a live `/v1/track` lookup, or a scheduled re-check (which yields to lookups). */
export type CallPurpose = "live" | "recheck";

export interface Budget {
  /** The row's key: `<adapter id>:<credential fingerprint>`. */
  key: string;
  adapter: AdapterId;
  limit: RateLimit;
  /** Share of rate and day only live lookups use, 0..0.9. */
  reserve: number;
}

/** The budget of one backend (undefined: none), keyed by a SHA-256 fingerprint of the credentials. */
export function budgetOf(
  adapter: AdapterId,
  live: boolean,
  credentials: Readonly<Record<string, string>>,
  overrides: Partial<Record<AdapterId, RateLimit>>,
  reservePercent: number,
): Budget | undefined {
  const limit = overrides[adapter] ?? (live ? DEFAULT_RATE_LIMITS[adapter] : undefined);
  if (!limit) return undefined;
  const material = Object.keys(credentials)
    .sort()
    .map((k) => `${k}=${credentials[k]}`)
    .join("\n");
  const fingerprint = live ? createHash("sha256").update(material).digest("hex").slice(0, 12) : "sandbox";
  return {
    key: `${adapter}:${fingerprint}`,
    adapter,
    limit,
    reserve: Math.min(0.9, Math.max(0, reservePercent / 100)),
  };
}

function bucketOf(b: Budget): {
  burst: number;
  paceRate: number;
  paceBurst: number;
  keep: number;
  recheckDayCap: number;
} {
  const { perSecond, perDay } = b.limit;
  const burst = b.limit.burst ?? Math.max(1, perSecond * BURST_SECONDS);
  const share = 1 - b.reserve;
  const paceRate = Math.min(perSecond * share, perDay > 0 ? (perDay * share) / 86_400 : Infinity);
  return {
    burst,
    paceRate,
    paceBurst: Math.max(1, paceRate * BURST_SECONDS),
    keep: Math.floor(b.reserve * burst),
    recheckDayCap: Math.floor(perDay * share),
  };
}

/** Re-check calls a budget allows per UTC day (the pace × a day, or the day's cap for re-checks). */
export function recheckCallsPerDay(b: Budget): number {
  const { paceRate, recheckDayCap } = bucketOf(b);
  const byPace = Math.floor(paceRate * 86_400);
  return b.limit.perDay > 0 ? Math.min(byPace, recheckDayCap) : byPace;
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const msToUtcMidnight = (ms: number) => 86_400_000 - (ms % 86_400_000);

interface Slice {
  left: number;
  expiresMs: number;
}

interface Grant {
  granted: number;
  tokens: number;
  pace: number;
  dayUsed: number;
}

/** The budgets of one process: slices it holds, and the grant statement. One per process and pool, built with the services (src/services.ts). */
export class CourierBudgets {
  private readonly slices = new Map<string, Slice>();
  /** One grant statement per budget and purpose at a time; others wait for it and take from its slice. */
  private readonly pending = new Map<string, Promise<Grant>>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly timers: Timers = systemTimers,
  ) {}

  /** Drops the slices held (shutdown, src/services.ts): their tokens stay spent, as when a process dies. */
  stop(): void {
    this.slices.clear();
  }

  /**
   * Takes one token of `b` for `purpose`, waiting up to `maxWaitMs` (default by purpose; 0: never wait).
   * @throws CourierBusyError (`rate_limited`) when none comes in time, the day's share is spent, or the database is down.
   */
  async acquire(
    b: Budget,
    purpose: CallPurpose,
    maxWaitMs = purpose === "live" ? LIVE_WAIT_MS : RECHECK_WAIT_MS,
  ): Promise<void> {
    const deadline = this.clock.now() + maxWaitMs;
    for (;;) {
      let waitMs: number;
      try {
        waitMs = await this.tryTake(b, purpose);
      } catch (err) {
        if (err instanceof CourierBusyError) throw err;
        throw new CourierBusyError(`${b.adapter}: courier budget unavailable`, 1);
      }
      if (waitMs === 0) return;
      const now = this.clock.now();
      if (now + waitMs > deadline) {
        countBudgetRefusal(b.adapter, purpose);
        const seconds = Math.max(1, Math.ceil(waitMs / 1000));
        throw new CourierBusyError(`${b.adapter}: ${purpose === "live" ? "" : "re-check "}rate budget spent`, seconds);
      }
      await new Promise<void>((resolve) => this.timers.setTimeout(resolve, Math.max(1, Math.ceil(waitMs))));
    }
  }

  /** One token of `b` from this process's slice or a new one: 0 when taken, else ms to wait. @throws the driver's error. */
  async tryTake(b: Budget, purpose: CallPurpose): Promise<number> {
    const id = `${b.key} ${purpose}`;
    for (;;) {
      if (this.takeLocal(id)) return 0;
      const inFlight = this.pending.get(id);
      if (inFlight) {
        await inFlight.catch(() => undefined);
        continue;
      }
      const p = this.grant(b, purpose).finally(() => this.pending.delete(id));
      this.pending.set(id, p);
      const g = await p;
      if (g.granted > 0) {
        if (this.takeLocal(id)) return 0;
        continue;
      }
      return this.waitAfter(b, purpose, g);
    }
  }

  private takeLocal(id: string): boolean {
    const s = this.slices.get(id);
    if (!s || s.left <= 0 || this.clock.now() >= s.expiresMs) return false;
    s.left--;
    return true;
  }

  /** Ms until a refused purpose may get a token, from what the row held before the refusal. */
  private waitAfter(b: Budget, purpose: CallPurpose, g: Grant): number {
    const { perSecond, perDay } = b.limit;
    const k = bucketOf(b);
    const now = this.clock.now();
    const dayCap = purpose === "live" ? perDay : k.recheckDayCap;
    if (perDay > 0 && g.dayUsed >= dayCap) return msToUtcMidnight(now);
    let s = (1 - g.tokens) / perSecond;
    if (purpose === "recheck") s = Math.max((1 + k.keep - g.tokens) / perSecond, (1 - g.pace) / k.paceRate);
    return Math.max(1, Math.ceil(s * 1000));
  }

  /** Locks the row, refills both buckets to now, takes up to a slice, in ONE statement; creates the row when missing. */
  private async grant(b: Budget, purpose: CallPurpose): Promise<Grant> {
    const k = bucketOf(b);
    const now = this.clock.now();
    const day = utcDay(now);
    const recheck = purpose === "recheck";
    const rate = recheck ? k.paceRate : b.limit.perSecond;
    const want = Math.max(1, Math.floor(rate * SLICE_SECONDS));
    const keep = recheck ? k.keep : 0;
    const dayCap = b.limit.perDay > 0 ? (recheck ? k.recheckDayCap : b.limit.perDay) : 0;
    const sql = this.db.$client;
    for (let attempt = 0; ; attempt++) {
      const [r] = await sql<{ granted: number; tokens: number; pace: number; day_used: number }[]>`
        with o as (select tokens, pace_tokens, refilled_ms, day, day_used from courier_budgets where key = ${b.key} for update),
        c as (
          select least(${k.burst}::float8, o.tokens + greatest(${now}::bigint - o.refilled_ms, 0) * ${b.limit.perSecond}::float8 / 1000) as t,
                 least(${k.paceBurst}::float8, o.pace_tokens + greatest(${now}::bigint - o.refilled_ms, 0) * ${k.paceRate}::float8 / 1000) as p,
                 greatest(o.refilled_ms, ${now}::bigint) as at,
                 case when o.day = ${day} then o.day_used else 0 end as du
          from o),
        g as (
          select c.*, greatest(0, least(${want}::int, floor(c.t)::int - ${keep}::int,
            case when ${recheck}::boolean then floor(c.p)::int else ${want}::int end,
            case when ${dayCap}::int > 0 then ${dayCap}::int - c.du else ${want}::int end)) as n
          from c)
        update courier_budgets u
        set tokens = g.t - g.n, pace_tokens = case when ${recheck}::boolean then g.p - g.n else g.p end,
            refilled_ms = g.at, day = ${day}, day_used = g.du + g.n, per_second = ${b.limit.perSecond}::float8, per_day = ${b.limit.perDay}::int
        from g where u.key = ${b.key}
        returning g.n as granted, g.t as tokens, g.p as pace, g.du as day_used`;
      if (r) {
        const g = {
          granted: Number(r.granted),
          tokens: Number(r.tokens),
          pace: Number(r.pace),
          dayUsed: Number(r.day_used),
        };
        if (g.granted > 0)
          this.slices.set(`${b.key} ${purpose}`, { left: g.granted, expiresMs: this.clock.now() + SLICE_TTL_MS });
        return g;
      }
      if (attempt > 0) throw new Error(`courier budget row ${b.key} missing`);
      // First use on this database (another process may be creating it too): a full bucket, then take again.
      await ensureBudgetRows(this.db, [b], now);
    }
  }
}

/** Creates the missing rows of `budgets` with a full bucket at `nowMs` (epoch ms); existing rows are left. */
export async function ensureBudgetRows(db: Db, budgets: readonly Budget[], nowMs: number): Promise<void> {
  const rows = [...new Map(budgets.map((b) => [b.key, b])).values()].map((b) => {
    const k = bucketOf(b);
    return {
      key: b.key,
      per_second: b.limit.perSecond,
      per_day: b.limit.perDay,
      tokens: k.burst,
      pace_tokens: k.paceBurst,
      refilled_ms: nowMs,
      day: utcDay(nowMs),
      day_used: 0,
    };
  });
  if (rows.length === 0) return;
  const sql = db.$client;
  await sql`insert into courier_budgets ${sql(rows)} on conflict do nothing`;
}
