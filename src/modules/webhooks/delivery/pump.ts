/**
 * The delivery worker's claimer: claimed rows wait for a slot in proportion to the finishing rate (docs/webhooks.md,
 * "The worker": Refill). No timer: a NOTIFY, the poll and finishing attempts call {@link DeliveryPump.wake}.
 */
import type postgres from "postgres";
import type { Clock } from "../../../lib/clock.ts";
import type { Logger } from "../../../lib/log.ts";
import { claimDue, type ClaimedDelivery } from "./outbox.ts";

/** Rows held waiting for a slot cover this many ms of the attempts' recent finishing rate. */
const CLAIM_AHEAD_MS = 50;
/** The finishing rate is measured over windows of at least this many ms (monotonic clock, see `rateClock`). */
export const RATE_WINDOW_MS = 100;

export interface DeliveryPump {
  /** Claims what is due now, even after a short claim; never throws (a failed claim pauses claims, 1 s doubling to 30 s). */
  wake(): Promise<void>;
  setRunning(on: boolean): void;
  inFlight(): Promise<void>[];
  /** Waits for the claim in progress, then takes the claimed rows no attempt was started for. */
  unstarted(): Promise<ClaimedDelivery[]>;
}

/** Claim sizes as the worker's options (worker.ts); `minPrefetch` defaults to `prefetch`. */
export interface PumpOptions {
  sql: postgres.Sql;
  clock: Clock;
  log: Logger;
  concurrency: number;
  prefetch: number;
  minPrefetch?: number;
  refillAt: number;
  leaseMs: number;
  /** How long a claimed row may wait for a slot, ms; the lease must still cover an attempt after it. */
  maxWaitMs: number;
  /** Hands back claimed rows that waited too long. Must not reject. */
  release: (rows: ClaimedDelivery[]) => Promise<unknown>;
  /** Runs one claimed delivery; its slot is free when the promise settles. Must not reject. */
  deliver: (row: ClaimedDelivery) => Promise<void>;
  /** The clock finishing rates are measured on, ms; default monotonic (tests pass a FakeClock). */
  rateClock?: Clock;
}

const monotonic: Clock = { now: () => performance.now() };

export function createDeliveryPump(o: PumpOptions): DeliveryPump {
  return new Pump(o);
}

class Pump implements DeliveryPump {
  private readonly attempts = new Set<Promise<void>>();
  private readonly ready: { row: ClaimedDelivery; claimedAt: number }[] = [];
  private readonly minPrefetch: number;
  // Finishing rate: attempts in the current window, its start, the last finish, the last window's rate (per ms).
  private finished = 0;
  private windowStart = 0;
  private lastFinish = -Infinity;
  private rate = 0;
  private running = false;
  private pass: Promise<void> | undefined;
  private again = false;
  // A short claim: wait for a NOTIFY or the poll, not claim per finished attempt.
  private drained = false;
  // A short claim drains only if no wake-up came while it ran (it may be for a row its snapshot missed).
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

  private startReady(): void {
    let stale: ClaimedDelivery[] | undefined;
    while (this.running && this.ready.length > 0 && this.attempts.size < this.o.concurrency) {
      const { row, claimedAt } = this.ready.shift()!;
      if (this.o.clock.now() - claimedAt > this.o.maxWaitMs) {
        stale ??= [];
        stale.push(row);
      } else this.track(this.o.deliver(row));
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
    // After a quiet window the rate is measured afresh.
    if (this.quietAt(t)) [this.rate, this.finished, this.windowStart] = [0, 0, t];
    this.lastFinish = t;
    this.finished++;
    if (t - this.windowStart < RATE_WINDOW_MS) return;
    this.rate = this.finished / (t - this.windowStart);
    this.finished = 0;
    this.windowStart = t;
  }

  private quietAt(t: number): boolean {
    return t - this.lastFinish > RATE_WINDOW_MS;
  }

  /** Rows to hold waiting now: {@link CLAIM_AHEAD_MS} of the finishing rate, within bounds; the floor after a quiet spell. */
  private prefetchNow(): number {
    const rate = this.quietAt(this.rateClock.now()) ? 0 : this.rate;
    return Math.min(this.o.prefetch, Math.max(this.minPrefetch, Math.round(rate * CLAIM_AHEAD_MS)));
  }

  private room(): { free: number; refill: number } {
    const prefetch = this.prefetchNow();
    return {
      free: this.o.concurrency + prefetch - this.attempts.size - this.ready.length,
      refill: Math.max(this.o.refillAt, Math.floor(prefetch / 2)),
    };
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
      this.backoffMs = Math.min(30_000, Math.max(1_000, this.backoffMs * 2));
      this.pausedUntil = Date.now() + this.backoffMs;
      this.o.log.warn("delivery claim failed; backing off", { ms: this.backoffMs, error: e as Error });
    }
  }
}
