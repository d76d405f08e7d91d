/** The courier health policy: figures from histograms, and the state machine driven minute by minute (fake clock). */
import { describe, expect, test } from "bun:test";
import {
  conditionLevel,
  emptyCounts,
  figuresOf,
  HEALTH,
  initialMemory,
  nextHealth,
  quantileMs,
  type CourierEventType,
  type HealthMemory,
} from "../../src/domain/courier-health.ts";
import { FakeClock } from "../../src/lib/clock.ts";

const MIN = 60_000;

describe("figures", () => {
  test("p50/p95 interpolate inside the fixed buckets; summed histograms give the figures of both", () => {
    const a = emptyCounts();
    a.latency[2] = 10; // 250–500 ms
    const b = emptyCounts();
    b.latency[5] = 10; // 2–3 s
    const sum = a.latency.map((n, i) => n + b.latency[i]!);
    expect(quantileMs(a.latency, 0.5)).toBe(375);
    expect(quantileMs(sum, 0.5)).toBe(500);
    expect(quantileMs(sum, 0.95)).toBe(2900);
    expect(quantileMs(emptyCounts().latency, 0.5)).toBeNull();
  });

  test("not found counts as answered; each kind has its share; too few calls is no verdict", () => {
    const c = emptyCounts();
    Object.assign(c.kinds, { ok: 80, not_found: 10, timeout: 6, server_error: 4 });
    c.calls = 100;
    const f = figuresOf(c);
    expect(f.success_share).toBe(0.9);
    expect(f.shares.timeout).toBe(0.06);
    expect(conditionLevel(f, null)).toBe(1);
    const few = emptyCounts();
    few.calls = few.kinds.timeout = HEALTH.minCalls - 1;
    expect(conditionLevel(figuresOf(few), null)).toBeNull();
  });

  test("slow: p95 above 3× the baseline and above the floor; no baseline, no latency rule", () => {
    const c = emptyCounts();
    c.calls = c.kinds.ok = 100;
    c.latency[6] = 100; // 3–5 s
    const f = figuresOf(c);
    expect(conditionLevel(f, 1000)).toBe(1);
    expect(conditionLevel(f, 2000)).toBe(0);
    expect(conditionLevel(f, null)).toBe(0);
  });
});

/** Runs the machine once a minute over `script` (level per minute); returns the events with their minute. */
function run(script: Level[], start: HealthMemory["state"] = "operational") {
  const clock = new FakeClock();
  let m: HealthMemory = { ...initialMemory(clock.now()), state: start };
  const events: [number, CourierEventType][] = [];
  script.forEach((level, minute) => {
    const out = nextHealth(m, level, clock.now());
    m = out.memory;
    if (out.event) events.push([minute, out.event]);
    clock.advance(MIN);
  });
  return { events, state: m.state };
}
type Level = 0 | 1 | 2 | null;
const times = (n: number, v: Level): Level[] => Array(n).fill(v);

describe("states with hysteresis", () => {
  test("degraded after 10 minutes of degraded figures, down after 10 more of down figures, back after 15 good", () => {
    const { events, state } = run([...times(12, 1), ...times(12, 2), ...times(16, 0)]);
    expect(events).toEqual([
      [10, "courier.degraded"],
      [22, "courier.down"],
      [39, "courier.recovered"],
    ]);
    expect(state).toBe("operational");
  });

  test("figures that cross the thresholds back and forth never flap: one bad minute resets the recovery", () => {
    const flapping = [...times(11, 1), ...Array.from({ length: 40 }, (_, i) => (i % 5 === 4 ? 1 : 0) as Level)];
    const { events, state } = run([0, ...flapping]);
    expect(events).toEqual([[11, "courier.degraded"]]);
    expect(state).toBe("degraded");
    // Nine bad minutes out of ten never reach ten in a row: no incident at all.
    expect(run(Array.from({ length: 60 }, (_, i) => (i % 10 === 9 ? 0 : 1) as Level)).events).toEqual([]);
  });

  test("a sudden outage goes straight to down; improving to degraded figures steps back to degraded after 15 minutes", () => {
    const { events } = run([...times(11, 2), ...times(16, 1), ...times(16, 0)]);
    expect(events).toEqual([
      [10, "courier.down"],
      [26, "courier.degraded"],
      [42, "courier.recovered"],
    ]);
  });

  test("too few calls: unknown from the start, and after 15 quiet minutes of an operational courier; no event", () => {
    expect(run(times(5, null), "unknown")).toEqual({ events: [], state: "unknown" });
    expect(run([0, ...times(16, null)])).toEqual({ events: [], state: "unknown" });
    expect(run([...times(3, null), 0], "unknown").state).toBe("operational");
    // A down courier with too few calls stays down: silence is no evidence of recovery.
    expect(run(times(30, null), "down")).toEqual({ events: [], state: "down" });
  });
});
