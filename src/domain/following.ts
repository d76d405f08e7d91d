/** Following policy (spec: Limits, "most couriers 3 per day") as pure functions: when a followed shipment is checked next. */

/** Re-checks a day of a followed shipment (spec: Limits: "most couriers 3 per day"). */
export const RECHECKS_PER_DAY = 3;

/** Seconds between two re-checks: a day over {@link RECHECKS_PER_DAY}, 8 hours. */
export const RECHECK_INTERVAL_SECONDS = 86_400 / RECHECKS_PER_DAY;

/** Share of the interval each re-check moves at random, either way (± 10 %), so shipments followed together spread out. */
export const RECHECK_JITTER = 0.1;

/** First back-off after a retryable courier failure, ms (never above the interval). */
export const RECHECK_BACKOFF_BASE_MS = 300_000;

/**
 * The next re-check after a successful look-up at `nowMs` (ms since the epoch): now + `intervalSeconds` ± 10 %
 * (spec-map Decisions: Re-checks). A look-up counts as a re-check, so a `/v1/track` moves it too.
 */
export function nextRecheckAt(nowMs: number, intervalSeconds: number = RECHECK_INTERVAL_SECONDS, random: () => number = Math.random): Date {
  const jitter = (random() * 2 * RECHECK_JITTER - RECHECK_JITTER) * intervalSeconds;
  return new Date(nowMs + Math.round((intervalSeconds + jitter) * 1000));
}

/**
 * Back-off after `failures` consecutive failed re-checks (1 = the first): `baseMs · 2^(failures−1)`, capped at
 * `capMs`, ± 10 % jitter. Milliseconds.
 */
export function backoffMs(failures: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const raw = Math.min(capMs, baseMs * 2 ** Math.min(30, Math.max(0, failures - 1)));
  return Math.round(raw * (1 - RECHECK_JITTER + random() * 2 * RECHECK_JITTER));
}

/**
 * Wait before the next check after a failed one, ms (docs/rechecks.md#courier-failures--decision): retryable
 * failures back off from `baseMs`, doubling, capped at the interval; the others wait the interval at once.
 */
export function recheckAfterFailureMs(retryable: boolean, failures: number, baseMs: number, intervalMs: number, random: () => number): number {
  const capMs = Math.max(baseMs, intervalMs);
  return retryable ? backoffMs(failures, baseMs, capMs, random) : backoffMs(1, capMs, capMs, random);
}
