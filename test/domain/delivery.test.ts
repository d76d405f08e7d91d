import { describe, expect, test } from "bun:test";
import {
  afterAttempt,
  backoffAfter,
  DEACTIVATE_AFTER_FAILURES,
  failureEffect,
  MAX_ATTEMPTS,
  nextAttemptAt,
  RETRY_SCHEDULE_SECONDS,
  shouldAbandon,
} from "../../src/domain/delivery.ts";

const T0 = Date.UTC(2026, 0, 1);

describe("delivery policy (spec: Delivery rules 2 and 4)", () => {
  test("retries after 1 min, 5 min, 30 min, 2 h, 24 h; six attempts in all", () => {
    expect([...RETRY_SCHEDULE_SECONDS]).toEqual([60, 300, 1800, 7200, 86_400]);
    expect(MAX_ATTEMPTS).toBe(6);
    expect([1, 2, 3, 4, 5].map((n) => backoffAfter(n))).toEqual([60, 300, 1800, 7200, 86_400]);
    expect([1, 2, 3, 4, 5].map((n) => nextAttemptAt(T0, n)!.getTime() - T0)).toEqual([
      60_000, 300_000, 1_800_000, 7_200_000, 86_400_000,
    ]);
  });

  test("the sixth failed attempt abandons; the fifth does not", () => {
    expect(shouldAbandon(5)).toBe(false);
    expect(shouldAbandon(6)).toBe(true);
    expect(nextAttemptAt(T0, 6)).toBeNull();
    expect(afterAttempt("failed", 6, T0)).toEqual({ state: "abandoned", nextAttemptAt: null });
    expect(afterAttempt("failed", 5, T0)).toEqual({ state: "pending", nextAttemptAt: new Date(T0 + 86_400_000) });
  });

  test("a configured schedule overrides the spec's; past its end the last entry repeats", () => {
    const schedule = [1, 2, 3, 4, 5];
    expect([1, 2, 3, 4, 5].map((n) => afterAttempt("failed", n, T0, schedule).nextAttemptAt!.getTime() - T0)).toEqual([
      1000, 2000, 3000, 4000, 5000,
    ]);
    expect(backoffAfter(9, [10, 20])).toBe(20);
  });

  test("delivered and dropped are final at any attempt", () => {
    for (const attempt of [1, 3, 6]) {
      expect(afterAttempt("delivered", attempt, T0)).toEqual({ state: "delivered", nextAttemptAt: null });
      expect(afterAttempt("dropped", attempt, T0)).toEqual({ state: "dropped", nextAttemptAt: null });
    }
  });

  test("a live webhook's count: abandoned and dropped add one, delivered resets, the rest and test deliveries leave it", () => {
    expect(failureEffect("live", "abandoned")).toBe("fail");
    expect(failureEffect("live", "dropped")).toBe("fail");
    expect(failureEffect("live", "delivered")).toBe("reset");
    expect(failureEffect("live", "pending")).toBeNull();
    expect(failureEffect("live", "skipped")).toBeNull();
    for (const state of ["abandoned", "dropped", "delivered"]) expect(failureEffect("test", state)).toBeNull();
  });

  test("20 consecutive failures deactivate (the Record statement applies it: test/webhooks/delivery.test.ts)", () => {
    expect(DEACTIVATE_AFTER_FAILURES).toBe(20);
  });
});
