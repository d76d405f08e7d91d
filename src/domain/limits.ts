/** The spec's numeric limits other than plans (spec: Limits): the demo allowance and asynchronous polling. */

/** "GET /demo/track: 5 requests per hour per IP address" (spec: Limits). */
export const DEMO_LIMIT_PER_HOUR = 5;

/** The demo limit's window, ms: one hour, rolling (spec-map Decisions: Demo limit). */
export const DEMO_WINDOW_MS = 3_600_000;

/** A demo hit's decision, in the terms of the `RateLimit-*` headers; `retryAfterSeconds` is 0 when allowed. */
export interface DemoDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the oldest hit of the window leaves it, i.e. one more request is admitted (>= 1). */
  resetSeconds: number;
  retryAfterSeconds: number;
}

/** Whether one more demo request is admitted, given the window's `hits` and the oldest at `oldestMs` (ms). */
export function demoDecision(
  hits: number,
  oldestMs: number | null,
  nowMs: number,
  limit: number = DEMO_LIMIT_PER_HOUR,
): DemoDecision {
  const untilOldestLeaves = Math.max(1, Math.ceil(((oldestMs ?? nowMs) + DEMO_WINDOW_MS - nowMs) / 1000));
  if (hits >= limit)
    return {
      allowed: false,
      limit,
      remaining: 0,
      resetSeconds: untilOldestLeaves,
      retryAfterSeconds: untilOldestLeaves,
    };
  return { allowed: true, limit, remaining: limit - hits - 1, resetSeconds: untilOldestLeaves, retryAfterSeconds: 0 };
}

/** Budget of an asynchronous lookup, ms: "10 to 30 seconds" (spec: Limits); then 504 `TIMEOUT`. */
export const ASYNC_LOOKUP_BUDGET_MS = 30_000;

/** Longest pause between two polls of an asynchronous backend, ms: a result is seen within 5 s of being ready. */
const ASYNC_POLL_MAX_DELAY_MS = 5_000;

/** Pause before poll `n` (0-based) of an asynchronous backend, ms: 1 s, 2 s, 3 s, … capped at {@link ASYNC_POLL_MAX_DELAY_MS}. */
export function asyncPollDelayMs(n: number): number {
  return Math.min(1000 * (n + 1), ASYNC_POLL_MAX_DELAY_MS);
}
