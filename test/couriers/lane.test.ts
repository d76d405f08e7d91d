/**
 * A courier lane bounds the work and the wait: lookups beyond the queue, or
 * that could not start in time, are refused at once with a Retry-After
 * (spec: Errors, 503; spec-map Decisions: Concurrent lookups).
 */
import { describe, expect, test } from "bun:test";
import { CourierBusyError, Lane } from "../../src/modules/couriers/lane.ts";

/** A lookup that finishes when `release()` is called. */
function held() {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return { fn: () => done.then(() => "ok"), release };
}

async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    return String(await p);
  } catch (e) {
    return e instanceof CourierBusyError ? `busy:${e.retryAfterSeconds}` : `error:${(e as Error).message}`;
  }
}

describe("courier lane", () => {
  test("concurrency 1, queue 1: the third lookup is refused at once; the queued one runs when the first ends", async () => {
    const lane = new Lane({ name: "t", concurrency: 1, queueLimit: 1, maxWaitMs: 10_000 });
    const a = held();
    const b = held();
    const first = outcome(lane.run(a.fn));
    const second = outcome(lane.run(b.fn));
    expect(await outcome(lane.run(async () => "never"))).toBe("busy:5");
    a.release();
    expect(await first).toBe("ok");
    b.release();
    expect(await second).toBe("ok");
    // Room again: the next one runs.
    expect(await outcome(lane.run(async () => "again"))).toBe("again");
  });

  test("a known lookup time refuses a lookup whose expected wait is past the budget, with that time as Retry-After", async () => {
    const lane = new Lane({ name: "t", concurrency: 1, queueLimit: 10, maxWaitMs: 5_000, expectedMs: 3_000 });
    const a = held();
    const first = outcome(lane.run(a.fn));
    // One wave ahead (3 s) plus its own 3 s > 5 s.
    expect(await outcome(lane.run(async () => "never"))).toBe("busy:3");
    a.release();
    expect(await first).toBe("ok");
  });

  test("a lookup still queued after the longest wait is refused then, and leaves the queue", async () => {
    const lane = new Lane({ name: "t", concurrency: 1, queueLimit: 5, maxWaitMs: 50 });
    const a = held();
    const first = outcome(lane.run(a.fn));
    const t0 = performance.now();
    expect(await outcome(lane.run(async () => "never"))).toStartWith("busy:");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(45);
    a.release();
    expect(await first).toBe("ok");
    expect(await outcome(lane.run(async () => "free"))).toBe("free");
  });

  test("never more than `concurrency` at work, whatever the order of arrivals and ends", async () => {
    const lane = new Lane({ name: "t", concurrency: 3, queueLimit: 100, maxWaitMs: 10_000 });
    let now = 0;
    let peak = 0;
    const work = async (ms: number) => {
      now++;
      peak = Math.max(peak, now);
      await Bun.sleep(ms);
      now--;
      return "ok";
    };
    const all = await Promise.all(Array.from({ length: 30 }, (_, i) => lane.run(() => work(i % 4))));
    expect(all.every((x) => x === "ok")).toBe(true);
    expect(peak).toBe(3);
  });
});
