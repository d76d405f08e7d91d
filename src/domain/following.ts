/** Following policy (spec: Limits, "most couriers 3 per day") as pure functions: when a followed shipment is checked next. */

/** Re-checks a day of a followed shipment (spec: Limits: "most couriers 3 per day"). */
export const RECHECKS_PER_DAY = 3;

/** Seconds between two re-checks: a day over {@link RECHECKS_PER_DAY}, 8 hours. */
export const RECHECK_INTERVAL_SECONDS = 86_400 / RECHECKS_PER_DAY;

/** Share of the interval each re-check moves at random, either way (± 10 %), so shipments followed together spread out. */
export const RECHECK_JITTER = 0.1;

/** First back-off after a retryable courier failure, ms (never above the interval). */
export const RECHECK_BACKOFF_BASE_MS = 300_000;

/** The next re-check after a look-up at `nowMs`: + `intervalSeconds` ± 10 % (spec-map Decisions: Re-checks). */
export function nextRecheckAt(
  nowMs: number,
  intervalSeconds: number = RECHECK_INTERVAL_SECONDS,
  random: () => number = Math.random,
): Date {
  const jitter = (random() * 2 * RECHECK_JITTER - RECHECK_JITTER) * intervalSeconds;
  return new Date(nowMs + Math.round((intervalSeconds + jitter) * 1000));
}

/** Back-off after `failures` failed re-checks, ms: `baseMs · 2^(failures−1)`, capped at `capMs`, ± 10 %. */
export function backoffMs(failures: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const raw = Math.min(capMs, baseMs * 2 ** Math.min(30, Math.max(0, failures - 1)));
  return Math.round(raw * (1 - RECHECK_JITTER + random() * 2 * RECHECK_JITTER));
}

/** Wait after a failed check, ms (docs/rechecks.md#courier-failures--decision). */
export function recheckAfterFailureMs(
  retryable: boolean,
  failures: number,
  baseMs: number,
  intervalMs: number,
  random: () => number,
): number {
  const capMs = Math.max(baseMs, intervalMs);
  return retryable ? backoffMs(failures, baseMs, capMs, random) : backoffMs(1, capMs, capMs, random);
}
