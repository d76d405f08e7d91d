/**
 * A bounded per-process gate for password hashing (each argon2id run holds PASSWORD_HASH_MEMORY_KIB): a short FIFO
 * queue, else turned away at once. Why: docs/dashboard.md#sign-in-throttling.
 */

export interface VerifyGateOptions {
  /** Hash/verify operations running at once in this process. */
  global: number;
  /** Operations running (and waiting) at once for one account. */
  perAccount: number;
  maxWaiting: number;
  /** Longest wait for a slot, ms (real time, not the service clock). */
  maxWaitMs: number;
}

/** Defaults: 4 hashes in flight; a caller waits up to 2 s behind at most 32 others. */
export const DEFAULT_VERIFY_GATE: VerifyGateOptions = { global: 4, perAccount: 2, maxWaiting: 32, maxWaitMs: 2_000 };

/** Ends a held slot; calling it twice is harmless. */
export type Release = () => void;

interface Waiter {
  key: string;
  grant: (r: Release | undefined) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class VerifyGate {
  private active = 0;
  private readonly running = new Map<string, number>();
  private readonly waitingPerKey = new Map<string, number>();
  private readonly queue: Waiter[] = [];

  constructor(readonly opts: VerifyGateOptions = DEFAULT_VERIFY_GATE) {}

  /** Slots in use now. */
  get inFlight(): number {
    return this.active;
  }

  /** A slot for one operation on `key` (the normalised email); undefined when full and the wait failed. */
  acquire(key: string): Promise<Release | undefined> {
    if (this.fits(key)) return Promise.resolve(this.take(key));
    const waitingHere = this.waitingPerKey.get(key) ?? 0;
    if (this.queue.length >= this.opts.maxWaiting || waitingHere >= this.opts.perAccount)
      return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const w: Waiter = {
        key,
        grant: resolve,
        timer: setTimeout(() => {
          this.dequeue(w);
          resolve(undefined);
        }, this.opts.maxWaitMs),
      };
      this.queue.push(w);
      this.waitingPerKey.set(key, waitingHere + 1);
    });
  }

  /** Runs `fn` holding a slot; undefined (without running it) when no slot could be had. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<{ value: T } | undefined> {
    const release = await this.acquire(key);
    if (!release) return undefined;
    try {
      return { value: await fn() };
    } finally {
      release();
    }
  }

  private fits(key: string): boolean {
    return this.active < this.opts.global && (this.running.get(key) ?? 0) < this.opts.perAccount;
  }

  private take(key: string): Release {
    this.active++;
    this.running.set(key, (this.running.get(key) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.active--;
      const n = (this.running.get(key) ?? 1) - 1;
      if (n > 0) this.running.set(key, n);
      else this.running.delete(key);
      this.wake();
    };
  }

  private dequeue(w: Waiter): void {
    const i = this.queue.indexOf(w);
    if (i >= 0) this.queue.splice(i, 1);
    const n = (this.waitingPerKey.get(w.key) ?? 1) - 1;
    if (n > 0) this.waitingPerKey.set(w.key, n);
    else this.waitingPerKey.delete(w.key);
  }

  /** Grants freed slots to the oldest waiters that fit (one held back by its account's limit blocks no one). */
  private wake(): void {
    for (let i = 0; this.active < this.opts.global; ) {
      const w = this.queue[i];
      if (!w) break;
      if (!this.fits(w.key)) {
        i++;
        continue;
      }
      clearTimeout(w.timer);
      this.dequeue(w);
      w.grant(this.take(w.key));
    }
  }
}
