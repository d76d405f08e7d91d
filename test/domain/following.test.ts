import { describe, expect, test } from "bun:test";
import {
  backoffMs,
  nextRecheckAt,
  RECHECK_INTERVAL_SECONDS,
  RECHECKS_PER_DAY,
  recheckAfterFailureMs,
} from "../../src/domain/following.ts";

const T0 = Date.UTC(2026, 0, 1);
const HOUR = 3_600_000;

describe("following policy (spec: Limits, re-check frequency)", () => {
  test("3 re-checks a day: every 8 hours", () => {
    expect(RECHECKS_PER_DAY).toBe(3);
    expect(RECHECK_INTERVAL_SECONDS).toBe(8 * 3600);
    expect(nextRecheckAt(T0, undefined, () => 0.5).getTime()).toBe(T0 + 8 * HOUR);
  });

  test("the next re-check moves at most 10 % either way", () => {
    expect(nextRecheckAt(T0, 1000, () => 0).getTime()).toBe(T0 + 900_000);
    expect(nextRecheckAt(T0, 1000, () => 0.999_999).getTime()).toBeCloseTo(T0 + 1_100_000, -1);
    for (let i = 0; i < 200; i++) {
      const d = nextRecheckAt(T0, 1000).getTime() - T0;
      expect(d).toBeGreaterThanOrEqual(900_000);
      expect(d).toBeLessThanOrEqual(1_100_000);
    }
  });

  test("back-off doubles per failure up to the cap", () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 5].map((n) => backoffMs(n, 1000, 5000, mid))).toEqual([1000, 2000, 4000, 5000, 5000]);
    expect(backoffMs(1_000, 1000, 5000, mid)).toBe(5000);
  });

  test("a retryable failure backs off from the base; any other waits the interval at once", () => {
    const mid = () => 0.5;
    expect(recheckAfterFailureMs(true, 1, 300_000, 8 * HOUR, mid)).toBe(300_000);
    expect(recheckAfterFailureMs(true, 3, 300_000, 8 * HOUR, mid)).toBe(1_200_000);
    expect(recheckAfterFailureMs(true, 30, 300_000, 8 * HOUR, mid)).toBe(8 * HOUR);
    expect(recheckAfterFailureMs(false, 1, 300_000, 8 * HOUR, mid)).toBe(8 * HOUR);
    // The cap never falls below the base.
    expect(recheckAfterFailureMs(false, 1, 300_000, 60_000, mid)).toBe(300_000);
  });
});
