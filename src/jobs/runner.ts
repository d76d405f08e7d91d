/**
 * The one loop of the job pipelines (docs/architecture.md, "Job runner"): wake-up (NOTIFY, poll), claims sized by
 * the finishing rate, per-key concurrency, lease renewal, claim back-off and stop. A pipeline brings its claim
 * (candidate query + queue statement) and its task; the outcome of a row is the task's to record.
 */
import type postgres from "postgres";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import { settleWithin } from "../lib/settle.ts";
import { KeyLimits, type KeyOptions } from "./keys.ts";
import type { LeaseKeeper } from "./leases.ts";
import { listenForWork } from "./queue.ts";

/** Rows held waiting for a slot cover this many ms of the tasks' recent finishing rate. */
const CLAIM_AHEAD_MS = 50;
/** The finishing rate is measured over windows of at least this many ms (monotonic clock, see `rateClock`). */
export const RATE_WINDOW_MS = 100;

/** What a pipeline provides: its claim, its task, and how unstarted rows go back. */
interface Pipeline<Row> extends KeyOptions<Row> {
  /** Claims up to `limit` rows due at `nowMs` (ms since the epoch), leaving out the keys in `full` (see `keyFullAt`). @throws what the database throws */
  claim(limit: number, nowMs: number, full: readonly string[]): Promise<Row[]>;
  /** Works one claimed row and records its outcome; its slot is free when it settles. Must not reject. */
  task(row: Row): Promise<void>;
  /** Gives back claimed rows never started (stop, or waited past `maxWaitMs`). Must not reject. */
  release(rows: Row[]): Promise<unknown>;
  /** The heartbeat of the rows held (waiting or running), e.g. the queue's `createLeaseKeeper`; none: leases outlive a task. */
  keepLeases?(held: () => Row[]): LeaseKeeper;
  /** Resolves once the outcomes of finished tasks are written (a batcher's); awaited by `drain` and `stop`. */
  settled?(): Promise<void>;
}

/** The runner's sizes; `minPrefetch` defaults to `prefetch`. */
export interface RunnerOptions<Row> extends Pipeline<Row> {
  /** Names the pipeline in logs. */
  name: string;
  clock: Clock;
  log: Logger;
  /** Tasks in flight at once. */
  concurrency: number;
  /** Claimed rows waiting for a slot at most; `minPrefetch` may wait however slowly tasks finish. */
  prefetch: number;
  minPrefetch?: number;
  /** Rows that must fit below the high-water mark before a claim. */
  refillAt: number;
  /** How long a claimed row may wait for a slot, ms; the lease must still cover a task after it. */
  maxWaitMs: number;
  /** Rows per claim of `drain` (default `concurrency`). */
  drainBatch?: number;
  /** LISTEN connection and channel of `start` (the queue's NOTIFY). */
  listen?: { sql: postgres.Sql; channel: string };
  /** The clock finishing rates are measured on, ms; default monotonic (tests pass a FakeClock). */
  rateClock?: Clock;
}

export interface JobRunner<Row> {
  /** Starts claiming: subscribes to the channel (if any) and claims what is due. Resolves once listening. */
  start(): Promise<void>;
  /** Claims what is due now, even after a short claim; never throws (a failed claim pauses claims, 1 s doubling to 30 s). */
  wake(): Promise<void>;
  /** Claims and works batch after batch (outcomes written after each; with `keyFullAt`, claims as rows finish) until a claim comes back empty and nothing runs; returns rows claimed. Concurrent calls share one drain. @throws when a claim fails */
  drain(): Promise<number>;
  /** Stops claiming, gives unstarted rows back, waits up to `timeout` ms (default 10,000) for running tasks and their outcomes. */
  stop(opts?: { timeout?: number }): Promise<void>;
  setRunning(on: boolean): void;
  inFlight(): Promise<void>[];
  /** Waits for the claim in progress, then takes the claimed rows no task was started for. */
  unstarted(): Promise<Row[]>;
}

const monotonic: Clock = { now: () => performance.now() };

export function createRunner<Row>(o: RunnerOptions<Row>): JobRunner<Row> {
  return new Runner(o);
}

class Runner<Row> implements JobRunner<Row> {
  private readonly tasks = new Map<Promise<void>, Row>();
  private readonly ready: { row: Row; claimedAt: number }[] = [];
  private readonly keys: KeyLimits<Row>;
  private readonly minPrefetch: number;
  private readonly rateClock: Clock;
  // Finishing rate: tasks in the current window, its start, the last finish, the last window's rate (per ms).
  private finished = 0;
  private windowStart = 0;
  private lastFinish = -Infinity;
  private rate = 0;
  private running = false;
  private stopped = false;
  private draining = 0;
  private pass: Promise<void> | undefined;
  private again = false;
  // A short claim: wait for a NOTIFY or the poll, not claim per finished task.
  private drained = false;
  // A short claim drains only if no wake-up came while it ran (it may be for a row its snapshot missed).
  private wakes = 0;
  private backoffMs = 0;
  private pausedUntil = 0;
  private unlisten: (() => Promise<void>) | undefined;
  private readonly keeper: LeaseKeeper | undefined;
  private draw: Promise<number> | undefined;

  constructor(private readonly o: RunnerOptions<Row>) {
    this.minPrefetch = Math.min(o.prefetch, o.minPrefetch ?? o.prefetch);
    this.rateClock = o.rateClock ?? monotonic;
    this.keys = new KeyLimits(o);
    this.keeper = o.keepLeases?.(() => this.held());
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.stopped = false;
    this.setRunning(true);
    if (this.o.listen) this.unlisten = await listenForWork(this.o.listen.sql, this.o.listen.channel, () => this.wake());
    void this.wake();
  }

  wake(): Promise<void> {
    this.wakes++;
    this.drained = false;
    return this.pump();
  }

  setRunning(on: boolean): void {
    this.running = on;
    this.keepLeases();
    this.startReady();
  }

  inFlight(): Promise<void>[] {
    return [...this.tasks.keys()];
  }

  async unstarted(): Promise<Row[]> {
    await this.pass;
    return this.ready.splice(0).map((r) => r.row);
  }

  drain(): Promise<number> {
    this.draw ??= this.drainAll().finally(() => (this.draw = undefined));
    return this.draw;
  }

  async stop(opts: { timeout?: number } = {}): Promise<void> {
    this.stopped = true;
    this.setRunning(false);
    await this.unlisten?.().catch(() => {});
    this.unlisten = undefined;
    const settled = this.o.settled ?? (() => Promise.resolve());
    await this.o.release(await this.unstarted());
    this.keeper?.start(); // the running rows stay leased while waited for
    await settleWithin(Promise.allSettled(this.inFlight()).then(settled), opts.timeout ?? 10_000);
    this.keeper?.stop();
  }

  private async drainAll(): Promise<number> {
    this.draining++;
    this.keepLeases();
    let total = 0;
    const flow = this.o.keyFullAt !== undefined;
    try {
      const batch = this.o.drainBatch ?? this.o.concurrency;
      while (!this.stopped) {
        const want = flow ? Math.min(batch, this.room().free) : batch;
        const claimedAt = this.o.clock.now();
        const rows = want > 0 ? await this.o.claim(want, claimedAt, this.keys.full(this.held())) : [];
        if (rows.length === 0 && (!flow || this.tasks.size === 0)) break;
        // Stopped while claiming: the rows go straight back.
        if (this.stopped) {
          await this.o.release(rows);
          break;
        }
        total += rows.length;
        for (const row of rows) this.ready.push({ row, claimedAt });
        this.startReady();
        if (!flow) await this.finishAll();
        // Flow: nothing claimable or no room; a finishing row frees a slot, maybe of a key the claim left out.
        else if (this.tasks.size > 0 && (rows.length === 0 || this.room().free <= 0))
          await Promise.race(this.inFlight());
      }
      if (flow) await this.finishAll();
      return total;
    } finally {
      this.draining--;
      this.keepLeases();
    }
  }

  /** Waits for the running tasks (and those they start), then for their outcomes. */
  private async finishAll(): Promise<void> {
    while (this.tasks.size > 0) await Promise.race(this.inFlight());
    await this.o.settled?.();
  }

  private get active(): boolean {
    return !this.stopped && (this.running || this.draining > 0);
  }

  /** A live claimer's rows stay leased; a dead claimer's come free within one lease. */
  private keepLeases(): void {
    if (this.active) this.keeper?.start();
    else this.keeper?.stop();
  }

  private held(): Row[] {
    return [...this.ready.map((w) => w.row), ...this.tasks.values()];
  }

  private startReady(): void {
    const stale: Row[] = [];
    for (let i = 0, w = this.ready[0]; w && this.active && this.tasks.size < this.o.concurrency; w = this.ready[i]) {
      if (this.o.clock.now() - w.claimedAt > this.o.maxWaitMs) {
        this.ready.splice(i, 1);
        stale.push(w.row);
      } else if (this.keys.hasRoom(w.row)) {
        this.ready.splice(i, 1);
        this.track(w.row);
      } else i++;
    }
    if (stale.length > 0) void this.o.release(stale);
  }

  private track(row: Row): void {
    this.keys.count(row, 1);
    const p = this.o.task(row);
    this.tasks.set(p, row);
    p.finally(() => {
      this.tasks.delete(p);
      this.keys.count(row, -1);
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
      free: this.o.concurrency + prefetch - this.tasks.size - this.ready.length,
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
          const full = this.keys.full(this.held());
          const rows = await this.o.claim(want, claimedAt, full);
          this.backoffMs = 0;
          for (const row of rows) this.ready.push({ row, claimedAt });
          this.startReady();
          // A claim that left full keys out is short of their rows, not of due ones.
          if (rows.length < want && this.wakes === wakes && full.length === 0) this.drained = true;
        }
      } while (this.again && this.running);
    } catch (e) {
      this.backoffMs = Math.min(30_000, Math.max(1_000, this.backoffMs * 2));
      this.pausedUntil = Date.now() + this.backoffMs;
      this.o.log.warn(`${this.o.name} claim failed; backing off`, { ms: this.backoffMs, error: e as Error });
    }
  }
}
