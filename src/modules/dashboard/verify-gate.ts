/**
 * A bounded gate for password hashing work. Each argon2id hash or verify
 * allocates the hash's memory (PASSWORD_HASH_MEMORY_KIB, 64 MiB by default) for its duration, so a
 * burst of sign-ins must not run them all at once: the gate admits at most
 * `global` at a time in this process and at most `perAccount` for one
 * account. A caller beyond that waits in a short FIFO queue (at most
 * `maxWaiting` callers, `perAccount` of them per account, for at most
 * `maxWaitMs`) and otherwise is turned away at once, to be answered
 * "too many attempts". Nothing queues without bound.
 *
 * The gate is per process; the database throttle (accounts/signin-throttle.ts) is what
 * holds across replicas.
 */

export interface VerifyGateOptions {
  /** Hash/verify operations running at once in this process. */
  global: number;
  /** Operations running at once for one account (and waiting for one account). */
  perAccount: number;
  /** Callers waiting in all. */
  maxWaiting: number;
  /** Longest wait for a slot, in milliseconds (real time, not the service clock). */
  maxWaitMs: number;
}

/** Defaults: 4 hashes (4 × 64 MiB at the default memory) at most in flight; a caller waits up to 2 s behind at most 32 others. */
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

  /** Slots in use now (for metrics and tests). */
  get inFlight(): number {
    return this.active;
  }

  /**
   * A slot for one operation on `key` (the normalised email).
   * @returns a release function, or undefined when the gate is full and the
   *   caller could not wait (queue full, or `maxWaitMs` passed).
   */
  acquire(key: string): Promise<Release | undefined> {
    if (this.fits(key)) return Promise.resolve(this.take(key));
    const waitingHere = this.waitingPerKey.get(key) ?? 0;
    if (this.queue.length >= this.opts.maxWaiting || waitingHere >= this.opts.perAccount) return Promise.resolve(undefined);
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

  /** Grants freed slots to the oldest waiters that fit (a waiter held back by its account's limit does not block others). */
  private wake(): void {
    for (let i = 0; i < this.queue.length && this.active < this.opts.global; ) {
      const w = this.queue[i]!;
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
