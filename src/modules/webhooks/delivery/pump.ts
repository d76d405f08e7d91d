/**
 * The delivery worker's claimer ("pump"): keeps up to `concurrency` attempts
 * in flight while due outbox rows exist, with more rows claimed and waiting
 * for a slot, so a finishing attempt's slot is filled at once instead of
 * after a claim round trip. How many wait is what the attempts of the last
 * {@link RATE_WINDOW_MS} would finish in {@link CLAIM_AHEAD_MS}, between
 * `minPrefetch` and `prefetch`, and `minPrefetch` again once a whole window
 * passed with none finished: fast receivers get large claims (fewer
 * statements for the database to run), while rows claimed for slow ones wait
 * in small numbers instead of being held from the other workers. It claims
 * again once half that many rows (at least `refillAt`) would fit below the
 * high-water mark (`concurrency` + that many), so one claim statement serves
 * many finished attempts and the pipeline never drains to refill. Waiting
 * rows hold their lease like rows being sent; a row that waited longer than
 * `maxWaitMs` (slow receivers holding every slot) is not started, since its
 * attempt might outlast the lease, and goes to `release` instead; rows never
 * started when the pump stops are handed back ({@link DeliveryPump.unstarted})
 * for their leases to be released.
 *
 * It has no timer of its own: a NOTIFY, the scheduler's poll
 * (WEBHOOK_POLL_SECONDS) and finishing attempts call {@link DeliveryPump.wake}.
 */
import type postgres from "postgres";
import type { Clock } from "../../../lib/clock.ts";
import type { Logger } from "../../../lib/log.ts";
import { claimDue, type ClaimedDelivery } from "./outbox.ts";

/** Rows held waiting for a slot cover this many ms of the attempts' recent finishing rate. */
export const CLAIM_AHEAD_MS = 50;
/** The finishing rate is measured over windows of at least this many ms (monotonic clock, see `rateClock`). */
export const RATE_WINDOW_MS = 100;

export interface DeliveryPump {
  /**
   * Forgets that the last claim came back short and claims what is due now (by the clock).
   * Resolves when this pass is over, attempts still running. Never throws: a failed claim
   * (database down or restarting) is logged and claims pause, 1 s doubling to 30 s.
   */
  wake(): Promise<void>;
  /** Starts (true) or stops (false) claiming and starting attempts; attempts in flight go on. */
  setRunning(on: boolean): void;
  /** The attempts in flight now (each settles once its attempt is made, see `deliver`). */
  inFlight(): Promise<void>[];
  /** Waits for the claim in progress, then takes the claimed rows no attempt was started for. */
  unstarted(): Promise<ClaimedDelivery[]>;
}

export interface PumpOptions {
  sql: postgres.Sql;
  clock: Clock;
  log: Logger;
  /** Attempts in flight at once at most. */
  concurrency: number;
  /** Claimed rows waiting for a slot at most, on top of `concurrency`. */
  prefetch: number;
  /** Claimed rows allowed to wait whatever the finishing rate (capped by `prefetch`); default `prefetch`. */
  minPrefetch?: number;
  /** Rows that must fit below the high-water mark before a claim is made, at least. */
  refillAt: number;
  /** Lease of each claim, ms. */
  leaseMs: number;
  /** How long a claimed row may wait for a slot, ms (by `clock`); the lease must still cover a whole attempt after it. */
  maxWaitMs: number;
  /** Hands back claimed rows that waited too long (their leases to be cleared). Must not reject. */
  release: (rows: ClaimedDelivery[]) => Promise<unknown>;
  /** Runs one claimed delivery; its slot is free when the promise settles. Must not reject. */
  deliver: (row: ClaimedDelivery) => Promise<void>;
  /** The clock finishing rates are measured on, ms; default the runtime's monotonic one (tests pass a FakeClock). */
  rateClock?: Clock;
}

const monotonic: Clock = { now: () => performance.now() };

/** Creates a pump; it claims nothing until `setRunning(true)` and a `wake()`. */
export function createDeliveryPump(o: PumpOptions): DeliveryPump {
  return new Pump(o);
}

class Pump implements DeliveryPump {
  private readonly attempts = new Set<Promise<void>>();
  private readonly ready: { row: ClaimedDelivery; claimedAt: number }[] = [];
  private readonly minPrefetch: number;
  // Attempts finished in the current rate window, when it began and when the last attempt finished
  // (by the rate clock), and the last complete window's rate (attempts per ms).
  private finished = 0;
  private windowStart = 0;
  private lastFinish = -Infinity;
  private rate = 0;
  private running = false;
  private pass: Promise<void> | undefined;
  private again = false;
  // The last claim came back short: nothing more is due until a NOTIFY or the poll says otherwise,
  // so finishing attempts do not each send a claim that finds nothing.
  private drained = false;
  // Wake-ups so far: a claim that comes back short marks the pump drained only if no wake-up came while it
  // ran (a NOTIFY for a row committed after the claim's snapshot would otherwise wait for the next poll).
  private wakes = 0;
  private backoffMs = 0;
  private pausedUntil = 0;

  private readonly rateClock: Clock;

  constructor(private readonly o: PumpOptions) {
    this.minPrefetch = Math.min(o.prefetch, o.minPrefetch ?? o.prefetch);
    this.rateClock = o.rateClock ?? monotonic;
  }

  wake(): Promise<void> {
    this.wakes++;
    this.drained = false;
    return this.pump();
  }

  setRunning(on: boolean): void {
    this.running = on;
    this.startReady();
  }

  inFlight(): Promise<void>[] {
    return [...this.attempts];
  }

  async unstarted(): Promise<ClaimedDelivery[]> {
    await this.pass;
    return this.ready.splice(0).map((r) => r.row);
  }

  /** Starts waiting rows while slots are free; rows that waited too long go to `release` instead. */
  private startReady(): void {
    let stale: ClaimedDelivery[] | undefined;
    while (this.running && this.ready.length > 0 && this.attempts.size < this.o.concurrency) {
      const { row, claimedAt } = this.ready.shift()!;
      if (this.o.clock.now() - claimedAt > this.o.maxWaitMs) (stale ??= []).push(row);
      else this.track(this.o.deliver(row));
    }
    if (stale) void this.o.release(stale);
  }

  private track(p: Promise<void>): void {
    this.attempts.add(p);
    p.finally(() => {
      this.attempts.delete(p);
      this.noteFinished();
      this.startReady();
      if (this.running && !this.drained) void this.pump();
    });
  }

  private noteFinished(): void {
    const t = this.rateClock.now();
    // After a whole window with no attempt finished, the rate is measured afresh from this one.
    if (this.quietAt(t)) [this.rate, this.finished, this.windowStart] = [0, 0, t];
    this.lastFinish = t;
    this.finished++;
    if (t - this.windowStart < RATE_WINDOW_MS) return;
    this.rate = this.finished / (t - this.windowStart);
    this.finished = 0;
    this.windowStart = t;
  }

  /** True when no attempt finished in the last {@link RATE_WINDOW_MS} before `t`. */
  private quietAt(t: number): boolean {
    return t - this.lastFinish > RATE_WINDOW_MS;
  }

  /**
   * Rows to hold waiting for a slot now: {@link CLAIM_AHEAD_MS} of the last window's finishing rate, within
   * bounds; the floor after a quiet spell (the busy rate before it says nothing about the receivers now).
   */
  private prefetchNow(): number {
    const rate = this.quietAt(this.rateClock.now()) ? 0 : this.rate;
    return Math.min(this.o.prefetch, Math.max(this.minPrefetch, Math.round(rate * CLAIM_AHEAD_MS)));
  }

  /** Rows that fit below the high-water mark, and how many must fit before a claim. */
  private room(): { free: number; refill: number } {
    const prefetch = this.prefetchNow();
    return { free: this.o.concurrency + prefetch - this.attempts.size - this.ready.length, refill: Math.max(this.o.refillAt, Math.floor(prefetch / 2)) };
  }

  private pump(): Promise<void> {
    if (this.pass) {
      this.again = true;
      return this.pass;
    }
    if (Date.now() < this.pausedUntil) return Promise.resolve();
    this.pass = this.claimWhileRoom().finally(() => (this.pass = undefined));
    return this.pass;
  }

  private async claimWhileRoom(): Promise<void> {
    try {
      do {
        this.again = false;
        for (let room = this.room(); this.running && !this.drained && room.free >= room.refill; room = this.room()) {
          const want = room.free;
          const claimedAt = this.o.clock.now();
          const wakes = this.wakes;
          const rows = await claimDue(this.o.sql, claimedAt, want, this.o.leaseMs);
          this.backoffMs = 0;
          for (const row of rows) this.ready.push({ row, claimedAt });
          this.startReady();
          if (rows.length < want && this.wakes === wakes) this.drained = true;
        }
      } while (this.again && this.running);
    } catch (e) {
      // Database down or restarting: back off (1 s doubling to 30 s); the poll resumes us.
      this.backoffMs = Math.min(30_000, Math.max(1_000, this.backoffMs * 2));
      this.pausedUntil = Date.now() + this.backoffMs;
      this.o.log.warn("delivery claim failed; backing off", { ms: this.backoffMs, error: e as Error });
    }
  }
}
