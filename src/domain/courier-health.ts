/** Courier health policy (docs/courier-health.md): call kinds, latency buckets, thresholds and the state machine. */

/** Webhook events about a courier's API health; sent only to webhooks that list them (docs/courier-health.md). */
export const COURIER_EVENT_TYPES = ["courier.degraded", "courier.down", "courier.recovered"] as const;
export type CourierEventType = (typeof COURIER_EVENT_TYPES)[number];

export type HealthState = "operational" | "degraded" | "down" | "unknown";

/** How one courier call ended, as health counts it; `not_found` is an answer, the others are failures. */
export const CALL_KINDS = ["ok", "not_found", "timeout", "server_error", "rate_limited", "malformed", "other"] as const;
export type CallKind = (typeof CALL_KINDS)[number];
/** The kinds that count as the courier answering (a number it does not know is a correct answer). */
const ANSWERED_KINDS: readonly CallKind[] = ["ok", "not_found"];

/** Upper bounds of the latency histogram, ms; one more bucket counts the calls above the last. Fixed so replicas add up. */
export const LATENCY_BUCKETS_MS = [100, 250, 500, 1000, 2000, 3000, 5000, 10_000, 20_000, 30_000] as const;

const MINUTE = 60_000;
/** Thresholds, all in one place (docs/courier-health.md, "States"). */
export const HEALTH = {
  /** The window each evaluation measures, ms. */
  windowMs: 10 * MINUTE,
  /** Fewer calls than this in the window: the figures say nothing (`unknown`). */
  minCalls: 20,
  /** Answered share below this: degraded. */
  degradedBelow: 0.95,
  /** Answered share below this: down. */
  downBelow: 0.5,
  /** p95 above this multiple of the 7-day baseline p95: degraded. */
  latencyFactor: 3,
  /** …and above this absolute p95, ms, so that a fast courier's 40 → 130 ms is not an incident. */
  latencyFloorMs: 1000,
  /** The baseline needs at least this many calls over 7 days, else no latency rule applies. */
  baselineMinCalls: 200,
  baselineMs: 7 * 24 * 60 * MINUTE,
  /** A worse condition must hold this long before the state follows it, ms. */
  enterMs: 10 * MINUTE,
  /** A better condition (or too few calls, from operational) must hold this long, ms. */
  recoverMs: 15 * MINUTE,
  /** Buckets and incidents are kept this long, ms. */
  retentionMs: 30 * 24 * 60 * MINUTE,
} as const;

/** A window's figures: counts by kind and the latency histogram (counts per {@link LATENCY_BUCKETS_MS} bucket, plus one). */
export interface WindowCounts {
  calls: number;
  kinds: Record<CallKind, number>;
  latency: number[];
}

export interface WindowFigures {
  calls: number;
  /** Answered share (ok + not_found) of the calls, 0..1; null without calls. */
  success_share: number | null;
  /** Each kind's share of the calls, 0..1 (0 without calls). */
  shares: Record<CallKind, number>;
  /** Latency percentiles, ms, interpolated within the histogram's buckets; null without calls. */
  p50_ms: number | null;
  p95_ms: number | null;
}

export const emptyCounts = (): WindowCounts => ({
  calls: 0,
  kinds: Object.fromEntries(CALL_KINDS.map((k) => [k, 0])) as Record<CallKind, number>,
  latency: Array(LATENCY_BUCKETS_MS.length + 1).fill(0),
});

/** The `q` quantile (0..1) of a histogram, ms: linear within its bucket; the open last bucket reports its lower bound. */
export function quantileMs(latency: readonly number[], q: number): number | null {
  const total = latency.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < latency.length; i++) {
    const n = latency[i] ?? 0;
    if (n > 0 && seen + n >= rank) {
      const lo = LATENCY_BUCKETS_MS[i - 1] ?? 0;
      const hi = LATENCY_BUCKETS_MS[i];
      if (hi === undefined) return lo;
      return Math.round(lo + ((hi - lo) * (rank - seen)) / n);
    }
    seen += n;
  }
  // Not reached for q ≤ 1: the loop's `seen` ends at `total`.
  return LATENCY_BUCKETS_MS.at(-1) ?? null;
}

const share = (n: number, d: number) => (d === 0 ? 0 : Math.round((n / d) * 10_000) / 10_000);

/** The figures of one window's counts. */
export function figuresOf(c: WindowCounts): WindowFigures {
  const answered = ANSWERED_KINDS.reduce((a, k) => a + c.kinds[k], 0);
  return {
    calls: c.calls,
    success_share: c.calls === 0 ? null : share(answered, c.calls),
    shares: Object.fromEntries(CALL_KINDS.map((k) => [k, share(c.kinds[k], c.calls)])) as Record<CallKind, number>,
    p50_ms: quantileMs(c.latency, 0.5),
    p95_ms: quantileMs(c.latency, 0.95),
  };
}

/** 0 within bounds, 1 degraded, 2 down; null for too few calls. `baselineP95Ms` null: no latency rule. */
export function conditionLevel(f: WindowFigures, baselineP95Ms: number | null): 0 | 1 | 2 | null {
  if (f.calls < HEALTH.minCalls || f.success_share === null) return null;
  if (f.success_share < HEALTH.downBelow) return 2;
  if (f.success_share < HEALTH.degradedBelow) return 1;
  const slow =
    baselineP95Ms !== null &&
    f.p95_ms !== null &&
    f.p95_ms > HEALTH.latencyFloorMs &&
    f.p95_ms > HEALTH.latencyFactor * baselineP95Ms;
  return slow ? 1 : 0;
}

/** What the state machine remembers between evaluations: the state and since when each condition has held (ms). */
export interface HealthMemory {
  state: HealthState;
  sinceMs: number;
  /** Condition at least degraded / down / at most degraded / within bounds / too few calls, continuously since. */
  atLeastDegradedMs: number | null;
  downMs: number | null;
  belowDownMs: number | null;
  withinMs: number | null;
  quietMs: number | null;
}

export const initialMemory = (nowMs: number): HealthMemory => ({
  state: "unknown",
  sinceMs: nowMs,
  atLeastDegradedMs: null,
  downMs: null,
  belowDownMs: null,
  withinMs: null,
  quietMs: null,
});

const held = (since: number | null, nowMs: number, ms: number) => since !== null && nowMs - since >= ms;
const keep = (on: boolean, since: number | null, nowMs: number) => (on ? (since ?? nowMs) : null);

/** The state after one evaluation at `nowMs`; `event` is the webhook event the transition sends, if any. */
export function nextHealth(
  prev: HealthMemory,
  level: 0 | 1 | 2 | null,
  nowMs: number,
): { memory: HealthMemory; event: CourierEventType | null } {
  const m: HealthMemory = {
    ...prev,
    atLeastDegradedMs: keep(level !== null && level >= 1, prev.atLeastDegradedMs, nowMs),
    downMs: keep(level === 2, prev.downMs, nowMs),
    belowDownMs: keep(level !== null && level <= 1, prev.belowDownMs, nowMs),
    withinMs: keep(level === 0, prev.withinMs, nowMs),
    quietMs: keep(level === null, prev.quietMs, nowMs),
  };
  const to = target(m, level, nowMs);
  if (to === m.state) return { memory: m, event: null };
  const event: CourierEventType | null =
    to === "down"
      ? "courier.down"
      : to === "degraded"
        ? "courier.degraded"
        : to === "operational" && (m.state === "degraded" || m.state === "down")
          ? "courier.recovered"
          : null;
  return { memory: { ...m, state: to, sinceMs: nowMs }, event };
}

function target(m: HealthMemory, level: 0 | 1 | 2 | null, nowMs: number): HealthState {
  switch (m.state) {
    case "unknown":
    case "operational":
      if (held(m.downMs, nowMs, HEALTH.enterMs)) return "down";
      if (held(m.atLeastDegradedMs, nowMs, HEALTH.enterMs)) return "degraded";
      if (m.state === "unknown") return level === 0 ? "operational" : "unknown";
      return held(m.quietMs, nowMs, HEALTH.recoverMs) ? "unknown" : "operational";
    case "degraded":
      if (held(m.downMs, nowMs, HEALTH.enterMs)) return "down";
      return held(m.withinMs, nowMs, HEALTH.recoverMs) ? "operational" : "degraded";
    case "down":
      if (held(m.withinMs, nowMs, HEALTH.recoverMs)) return "operational";
      // Still degraded figures after 15 minutes: a step back; figures already within bounds wait for recovery instead.
      return level === 1 && held(m.belowDownMs, nowMs, HEALTH.recoverMs) ? "degraded" : "down";
  }
}

/** The kind of a failed call from the adapter's failure class and HTTP status (docs/courier-health.md, "Kinds"). */
export function callKindOf(failure: string | null, httpStatus?: number): CallKind {
  switch (failure) {
    case null:
      return "ok";
    case "not_found":
    case "invalid_number":
      return "not_found";
    case "timeout":
      return "timeout";
    case "rate_limited":
      return "rate_limited";
    case "backend":
      return httpStatus !== undefined && httpStatus >= 500 ? "server_error" : "malformed";
    default:
      return "other";
  }
}
