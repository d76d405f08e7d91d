/** Alert e-mail retry policy (docs/alerts.md#delivery-the-alerts-outbox) as constants; the job runner applies them. */

/** Tries before an alert is given up (`failed`). */
export const ALERT_MAX_ATTEMPTS = 10;

/** The wait after the first failed try, ms; it doubles per try up to {@link ALERT_RETRY_MAX_MS}. */
export const ALERT_RETRY_BASE_MS = 30_000;

/** The longest wait between tries, ms: 6 hours. */
export const ALERT_RETRY_MAX_MS = 6 * 3_600_000;
