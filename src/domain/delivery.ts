/** Delivery policy (spec: Events, Delivery rules 2 and 4) as pure functions; the SQL gets their results. */

/** Seconds before retries 1..5 (spec: Delivery rules 2: 1 min, 5 min, 30 min, 2 h, 24 h). */
export const RETRY_SCHEDULE_SECONDS = [60, 300, 1800, 7200, 86_400] as const;

/** Receivers are expected to answer within 5 seconds (spec: Events, Delivery rules 6), ms. */
export const RECEIVER_TIMEOUT_MS = 5_000;

/** Attempts per delivery (spec: Delivery rules 2: the first attempt and five retries, six in all). */
export const MAX_ATTEMPTS = 6;

/**
 * Consecutive failed live deliveries that deactivate a webhook (spec: Delivery rules 4; Live webhook lifecycle): a
 * count reaching it deactivates. Applied set-wise by the Record statement (`recordOutcomes`), which gets it as a parameter.
 */
export const DEACTIVATE_AFTER_FAILURES = 20;

/** Seconds to wait after attempt `attempt` (1-based) failed; the schedule's last entry for any later attempt. */
export function backoffAfter(attempt: number, schedule: readonly number[] = RETRY_SCHEDULE_SECONDS): number {
  const seconds = schedule[Math.min(Math.max(attempt, 1), schedule.length) - 1];
  if (seconds === undefined) throw new Error("internal: the retry schedule is empty");
  return seconds;
}

/** Whether a failed attempt `attempt` (1-based) was the last one allowed: the delivery is then abandoned. */
export function shouldAbandon(attempt: number, maxAttempts: number = MAX_ATTEMPTS): boolean {
  return attempt >= maxAttempts;
}

/** When the next attempt is due after attempt `attempt` failed at `nowMs` (epoch ms), or null when abandoned. */
export function nextAttemptAt(
  nowMs: number,
  attempt: number,
  schedule: readonly number[] = RETRY_SCHEDULE_SECONDS,
): Date | null {
  return shouldAbandon(attempt) ? null : new Date(nowMs + backoffAfter(attempt, schedule) * 1000);
}

export type AttemptResult = "delivered" | "dropped" | "failed";

export interface AttemptVerdict {
  state: "delivered" | "dropped" | "abandoned" | "pending";
  nextAttemptAt: Date | null;
}

/** The delivery's fate after attempt `attempt` ended with `result` (spec: Delivery rules 1–3). */
export function afterAttempt(
  result: AttemptResult,
  attempt: number,
  nowMs: number,
  schedule: readonly number[] = RETRY_SCHEDULE_SECONDS,
): AttemptVerdict {
  if (result !== "failed") return { state: result, nextAttemptAt: null };
  const next = nextAttemptAt(nowMs, attempt, schedule);
  return next ? { state: "pending", nextAttemptAt: next } : { state: "abandoned", nextAttemptAt: null };
}

/** A recorded delivery's effect on its live webhook's failure count (spec: Live webhook lifecycle). */
export function failureEffect(mode: "live" | "test", state: string): "fail" | "reset" | null {
  if (mode !== "live") return null;
  if (state === "delivered") return "reset";
  return state === "abandoned" || state === "dropped" ? "fail" : null;
}
