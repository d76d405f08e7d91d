import { describe, expect, test } from "bun:test";
import { rememberBounded, SIM_MAX_NUMBERS } from "../../src/twin-kit/bounded.ts";
import { startSimulator } from "../../src/sandbox/server.ts";

describe("the simulator's per-number memory is bounded", () => {
  test("a new key past the limit forgets the oldest one; an existing key keeps its place", () => {
    const m = new Map<string, number>();
    for (const k of ["a", "b", "c"]) rememberBounded(m, k, 1, 3);
    rememberBounded(m, "a", 2, 3); // existing: no eviction, value updated
    expect([...m.entries()]).toEqual([
      ["a", 2],
      ["b", 1],
      ["c", 1],
    ]);
    rememberBounded(m, "d", 1, 3);
    expect([...m.keys()]).toEqual(["b", "c", "d"]);
    expect(m.size).toBe(3);
  });

  test("the default bound is large enough for any test or benchmark run", () => {
    expect(SIM_MAX_NUMBERS).toBeGreaterThanOrEqual(100_000);
  });

  test("the simulator still counts backend calls per number through the bounded map", async () => {
    const sim = startSimulator({ clock: { now: () => Date.now() }, stepSeconds: 60, asyncSeconds: 1 });
    try {
      const token = sim.credential("DELHIVERY_TOKEN");
      const call = (awb: string) =>
        fetch(`${sim.baseUrlFor("delhivery")}/api/v1/packages/json/?waybill=${awb}`, {
          headers: { authorization: `Token ${token}` },
        }).then((r) => r.text());
      await call("123456789010");
      expect(sim.calls("delhivery", "123456789010")).toBe(1);
    } finally {
      await sim.stop();
    }
  });
});
