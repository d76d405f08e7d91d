/** Retry and back-off of a job's task (docs/architecture.md, "Job runner"); each pipeline records the result. */

/** Retry policy of a task: tries before giving up, and the wait after failed try `n` (1-based), `baseMs` doubling to `maxMs`. */
export interface RetryPolicy {
  maxAttempts: number;
  baseMs: number;
  maxMs: number;
}

/** After failed try `attempts` (1-based) at `nowMs`: given up, or due again at `nextAtMs` (ms since the epoch). */
export function retryAfter(p: RetryPolicy, attempts: number, nowMs: number): { giveUp: boolean; nextAtMs: number } {
  const waitMs = Math.min(p.maxMs, p.baseMs * 2 ** Math.max(0, attempts - 1));
  return { giveUp: attempts >= p.maxAttempts, nextAtMs: nowMs + waitMs };
}
