import { describe, expect, test } from "bun:test";
import {
  ASYNC_LOOKUP_BUDGET_MS,
  asyncPollDelayMs,
  DEMO_LIMIT_PER_HOUR,
  DEMO_WINDOW_MS,
  demoDecision,
} from "../../src/domain/limits.ts";

const T0 = Date.UTC(2026, 0, 1);

describe("demo limit (spec: Limits, 5 requests per hour per IP address)", () => {
  test("five admitted in a rolling hour, the sixth refused until the oldest leaves", () => {
    expect(DEMO_LIMIT_PER_HOUR).toBe(5);
    expect(DEMO_WINDOW_MS).toBe(3_600_000);
    expect(demoDecision(0, null, T0)).toEqual({
      allowed: true,
      limit: 5,
      remaining: 4,
      resetSeconds: 3600,
      retryAfterSeconds: 0,
    });
    expect(demoDecision(4, T0, T0 + 60_000)).toMatchObject({ allowed: true, remaining: 0 });
    expect(demoDecision(5, T0, T0 + 60_000)).toEqual({
      allowed: false,
      limit: 5,
      remaining: 0,
      resetSeconds: 3540,
      retryAfterSeconds: 3540,
    });
  });

  test("Retry-After is at least one second", () => {
    expect(demoDecision(5, T0, T0 + DEMO_WINDOW_MS - 1).retryAfterSeconds).toBe(1);
  });
});

describe("asynchronous couriers (spec: Limits, 10 to 30 seconds)", () => {
  test("the budget is the spec's upper end, and polls come 1 s, 2 s, … apart, at most 5 s", () => {
    expect(ASYNC_LOOKUP_BUDGET_MS).toBe(30_000);
    expect([0, 1, 2, 3, 4, 5, 50].map(asyncPollDelayMs)).toEqual([1000, 2000, 3000, 4000, 5000, 5000, 5000]);
  });

  test("within the budget, a backend answering at the spec's slowest (30 s) is polled at least 6 times", () => {
    let elapsed = 0;
    let polls = 0;
    for (let n = 0; elapsed < ASYNC_LOOKUP_BUDGET_MS; n++, polls++) elapsed += asyncPollDelayMs(n);
    expect(polls).toBeGreaterThanOrEqual(6);
  });
});
