/** A backend's lane (spec-map Decisions: Concurrent lookups): bounded queue, early 503 (docs/performance.md). */
import { systemTimers, type Timers } from "../../lib/clock.ts";
import { CourierError } from "./adapters/types.ts";

/** The courier lane is full: answer 503 COURIER_BUSY with `Retry-After: retryAfterSeconds`. */
export class CourierBusyError extends CourierError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    // Retryable like a courier's own throttling; re-checks back off from it the same way.
    super("rate_limited", message);
    this.name = "CourierBusyError";
  }
}

export interface LaneOptions {
  concurrency: number;
  queueLimit: number;
  /** Longest wait for a turn, ms. */
  maxWaitMs: number;
  name: string;
  /** Expected lookup time before any has finished, ms (asynchronous backends: a guess from the budget). */
  expectedMs?: number;
  /** What times out a wait for a turn; default the runtime's timers (tests pass a FakeClock). */
  timers?: Timers;
}

interface Waiter {
  start: () => void;
  timer: unknown;
}

export class Lane {
  private active = 0;
  private readonly queue: Waiter[] = [];
  /** Exponentially weighted mean lookup time, ms; undefined until one finished. */
  private meanMs: number | undefined;

  private readonly timers: Timers;

  constructor(private readonly o: LaneOptions) {
    this.meanMs = o.expectedMs;
    this.timers = o.timers ?? systemTimers;
  }

  /** Seconds a refused client should wait before retrying (≥ 1). */
  private retryAfter(): number {
    return Math.max(1, Math.ceil((this.meanMs ?? this.o.maxWaitMs / 2) / 1000));
  }

  private busy(why: string): CourierBusyError {
    return new CourierBusyError(`${this.o.name}: ${why}`, this.retryAfter());
  }

  /** Runs `fn` when the lane has room. @throws CourierBusyError when it could not run in time */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active < this.o.concurrency) this.active++;
    else {
      if (this.queue.length >= this.o.queueLimit) throw this.busy("queue full");
      if (this.meanMs !== undefined) {
        const waves = Math.ceil((this.queue.length + 1) / this.o.concurrency);
        if (waves * this.meanMs + this.meanMs > this.o.maxWaitMs) throw this.busy("expected wait too long");
      }
      // Resolved by a finishing lookup, which hands its slot over (`active` stays as it is).
      await new Promise<void>((resolve, reject) => {
        const w: Waiter = {
          start: () => {
            this.timers.clearTimeout(w.timer);
            resolve();
          },
          timer: this.timers.setTimeout(() => {
            this.queue.splice(this.queue.indexOf(w), 1);
            reject(this.busy("waited too long for a turn"));
          }, this.o.maxWaitMs),
        };
        this.queue.push(w);
      });
    }
    const started = performance.now();
    try {
      return await fn();
    } finally {
      const took = performance.now() - started;
      this.meanMs = this.meanMs === undefined ? took : this.meanMs * 0.8 + took * 0.2;
      const next = this.queue.shift();
      if (next) next.start();
      else this.active--;
    }
  }
}
