/**
 * A courier lane bounds the work and the wait: lookups beyond the queue, or
 * that could not start in time, are refused at once with a Retry-After
 * (spec: Errors, 503; spec-map Decisions: Concurrent lookups).
 */
import { describe, expect, test } from "bun:test";
import { FakeClock } from "../../src/lib/clock.ts";
import { CourierBusyError, Lane } from "../../src/modules/couriers/lane.ts";

/** A lookup that finishes when `release()` is called. */
function held() {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return { fn: () => done.then(() => "ok"), release };
}

/** Lets pending promise callbacks run (no time passes). */
const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

/** `p`'s value once the callbacks queued now have run, or "pending". */
async function settled(p: Promise<string>): Promise<string> {
  await flush();
  return Promise.race([p, Promise.resolve("pending")]);
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
    const clock = new FakeClock();
    const lane = new Lane({ name: "t", concurrency: 1, queueLimit: 5, maxWaitMs: 50, timers: clock });
    const a = held();
    const first = outcome(lane.run(a.fn));
    const second = outcome(lane.run(async () => "never"));
    clock.advance(49);
    expect(await settled(second)).toBe("pending");
    clock.advance(1);
    expect(await settled(second)).toStartWith("busy:");
    expect(clock.pendingTimers()).toBe(0);
    a.release();
    expect(await first).toBe("ok");
    expect(await outcome(lane.run(async () => "free"))).toBe("free");
  });

  test("a lookup that gets its turn in time is not refused later: its wait timer is cleared", async () => {
    const clock = new FakeClock();
    const lane = new Lane({ name: "t", concurrency: 1, queueLimit: 5, maxWaitMs: 50, timers: clock });
    const a = held();
    const first = outcome(lane.run(a.fn));
    const b = held();
    const second = outcome(lane.run(b.fn));
    clock.advance(49);
    a.release();
    expect(await first).toBe("ok");
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(1_000);
    b.release();
    expect(await second).toBe("ok");
  });

  test("never more than `concurrency` at work, whatever the order of arrivals and ends", async () => {
    const lane = new Lane({ name: "t", concurrency: 3, queueLimit: 100, maxWaitMs: 10_000 });
    let working = 0;
    let peak = 0;
    const running: (() => void)[] = [];
    const work = () => {
      working++;
      peak = Math.max(peak, working);
      return new Promise<string>((resolve) => running.push(() => (working--, resolve("ok"))));
    };
    // Arrivals and ends interleaved in a fixed scrambled order: 30 arrivals, and an end whenever the step says so.
    const all: Promise<string>[] = [];
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647);
    while (all.length < 30 || running.length > 0) {
      if (all.length < 30 && (running.length === 0 || next() % 3 !== 0)) all.push(lane.run(work));
      else running.splice(next() % running.length, 1)[0]!();
      await flush();
      expect(working).toBeLessThanOrEqual(3);
    }
    expect(await Promise.all(all)).toEqual(Array(30).fill("ok"));
    expect(peak).toBe(3);
  });
});
