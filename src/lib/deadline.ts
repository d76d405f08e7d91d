/** One deadline per request for its database waits (docs/deployment.md, "When the database does not answer"). */
import { AsyncLocalStorage } from "node:async_hooks";

/**
 * An instant on the monotonic clock (ms) by which a request stops waiting for the database. Time spent in a courier
 * call ({@link offTheClock}) moves it later by as much: it bounds the request's database waits, which add up.
 */
export class Deadline {
  private at: number;
  private open = true;
  /** Calls off the clock now, and since when (overlapping calls move the deadline once). */
  private off = 0;
  private offSince = 0;

  constructor(
    budgetMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.at = now() + budgetMs;
  }

  /** Ms left for a wait starting now (0 or less: none); undefined once the request is answered (no deadline then). */
  leftMs(): number | undefined {
    return this.open ? this.at - this.now() : undefined;
  }

  /** Runs `fn` off the clock: the deadline moves later by the time it took (once for calls that overlap). */
  async excluding<T>(fn: () => Promise<T>): Promise<T> {
    if (this.off++ === 0) this.offSince = this.now();
    try {
      return await fn();
    } finally {
      if (--this.off === 0) this.at += this.now() - this.offSince;
    }
  }

  /** The request is answered: what its context still runs afterwards (a response stream, a timer) has no deadline. */
  close(): void {
    this.open = false;
  }
}

const current = new AsyncLocalStorage<Deadline>();

/** Runs `fn` with `deadline` as the deadline of every database wait it starts, directly or after awaits. */
export function withDeadline<R>(deadline: Deadline, fn: () => R): R {
  return current.run(deadline, fn);
}

/** Ms the current request has left for a database wait; undefined outside a request (no deadline). */
export function deadlineLeftMs(): number | undefined {
  return current.getStore()?.leftMs();
}

/** Runs `fn` (a courier call, bounded by its own budget) without counting its time against the current deadline. */
export function offTheClock<T>(fn: () => Promise<T>): Promise<T> {
  const d = current.getStore();
  return d ? d.excluding(fn) : fn();
}

/** Runs `fn` with no deadline: bookkeeping that must finish whatever the request's fate (a quota give-back). */
export function withoutDeadline<R>(fn: () => R): R {
  return current.exit(fn);
}

/** The current request's deadline passed while it waited; `code` as the driver's (the API answers 503). */
class DeadlineExceededError extends Error {
  readonly code = "DEADLINE_EXCEEDED";
}

/**
 * Waits for `work` until the current request's deadline, no longer; `work` itself goes on (a quota grant another
 * request may use). Outside a request, `work` as is.
 * @throws DeadlineExceededError when the deadline passes first; else what `work` throws
 */
export function untilDeadline<T>(work: Promise<T>): Promise<T> {
  const left = deadlineLeftMs();
  if (left === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new DeadlineExceededError("request deadline passed")), Math.max(0, left));
    work.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}
