/**
 * How far ahead the claimer claims (src/jobs/runner.ts): while attempts finish fast the rows
 * held waiting grow towards `prefetch` (claims get large); while they finish slowly no more than
 * `minPrefetch` wait, so rows are not held from other workers behind slow receivers. Real PostgreSQL;
 * the attempts are stand-ins the test ends, their durations set on the fake clock the rate is measured on,
 * and every claim's row limit is read off the statement.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type postgres from "postgres";
import { FakeClock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { createRunner, RATE_WINDOW_MS } from "../../src/jobs/runner.ts";
import { claimDue, type ClaimedDelivery } from "../../src/modules/webhooks/delivery/outbox.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { emit, shipment } from "./fixtures.ts";
import { webhookEnv } from "./receiver.ts";
import { proxyStatements } from "../helpers/sql-proxy.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext(await webhookEnv());
});
afterAll(async () => {
  await ctx.close();
});

/** `sql` that notes the row limit of every claim (the value of its `limit`). */
function noting(sql: postgres.Sql) {
  const limits: number[] = [];
  const proxy = proxyStatements(sql, (send, strings, values) => {
    // The value interpolated right after the claim's `limit` keyword (later fragments may follow it).
    if (strings.join("").includes("from delivery_queue q"))
      limits.push(Number(values[strings.findIndex((s) => /\blimit\s*$/.test(s))]));
    return send();
  });
  return { sql: proxy, limits };
}

/** A live webhook of a new account and `n` due outbox rows for it. */
async function dueRows(n: number): Promise<void> {
  const acc = await ctx.account("business");
  const [res] = await ctx.call("/v1/webhooks", {
    key: acc.key,
    method: "POST",
    body: JSON.stringify({ url: "https://127.0.0.1:9/w", events: ["tracking.updated"], mode: "live" }),
  });
  expect(res.status).toBe(201);
  const shp = await shipment(ctx.tdb.db, [acc.id]);
  for (let i = 0; i < n; i++) await emit(ctx.tdb.db, shp, "tracking.updated", new Date(ctx.clock.now()));
}

/**
 * A pump whose attempts end when the test ends them, with its finishing rate measured on a fake clock: `step(ms)`
 * waits (on events, not time) until both slots are busy or every row is started, then moves the rate clock `ms` and
 * ends the attempts in flight: attempts that take `ms` each, two at a time.
 */
function drivenPump() {
  const { sql, limits } = noting(ctx.tdb.sql);
  const rateClock = new FakeClock();
  const inFlight: (() => void)[] = [];
  const counts = { started: 0, finished: 0 };
  let onStart: (() => void) | undefined;
  const pump = createRunner<ClaimedDelivery>({
    name: "delivery",
    claim: (limit, nowMs) => claimDue(sql, nowMs, limit, 60_000),
    clock: ctx.clock,
    rateClock,
    log: silentLogger,
    concurrency: 2,
    prefetch: 100,
    minPrefetch: 4,
    refillAt: 1,
    maxWaitMs: 30_000,
    release: async () => {},
    task: () => {
      counts.started++;
      const done = new Promise<void>((resolve) => inFlight.push(() => (counts.finished++, resolve())));
      onStart?.();
      return done;
    },
  });
  /** Resolves once `n` attempts are in flight (the pump starts them after its claims come back). */
  const busy = (n: number) =>
    new Promise<void>((resolve) => {
      onStart = () => {
        if (inFlight.length < n) return;
        resolve();
        onStart = undefined;
      };
      onStart();
    });
  const step = async (ms: number, total: number) => {
    await busy(Math.min(2, total - counts.finished));
    rateClock.advance(ms);
    for (const end of inFlight.splice(0)) end();
    // The ended attempts' callbacks (start the next waiting row, claim again) run before the next step.
    await Promise.resolve();
  };
  const stop = async () => {
    pump.setRunning(false);
    for (const end of inFlight.splice(0)) end();
    await Promise.allSettled(pump.inFlight());
  };
  return { pump, limits, counts, rateClock, step, stop };
}

/** Runs a pump over `n` due rows, attempts taking `attemptMs` each on the rate clock, until all `n` have ended. */
async function run(n: number, attemptMs: number) {
  const d = drivenPump();
  let peakHeld = 0;
  d.pump.setRunning(true);
  void d.pump.wake();
  try {
    while (d.counts.finished < n) {
      await d.step(attemptMs, n);
      // Rows claimed so far and not finished: in flight plus waiting for a slot.
      peakHeld = Math.max(peakHeld, d.limits.reduce((a, b) => a + b, 0) - d.counts.finished);
    }
  } finally {
    await d.stop();
  }
  return { started: d.counts.started, limits: d.limits, peakHeld };
}

test("attempts that finish fast make the claims grow past the floor, up to the cap", async () => {
  await dueRows(400);
  const { started, limits } = await run(400, 1);
  expect(started).toBe(400);
  // The first claims know no rate yet: slots + the floor.
  expect(limits[0]).toBe(2 + 4);
  // Once a rate window (RATE_WINDOW_MS) has passed, 50 ms of ~2 attempts per ms asks for far more.
  expect(RATE_WINDOW_MS).toBeLessThan(1_000);
  expect(Math.max(...limits)).toBeGreaterThan(2 + 4);
  expect(Math.max(...limits)).toBeLessThanOrEqual(2 + 100);
}, 60_000);

test("attempts that finish slowly keep the rows held at the slots plus the floor", async () => {
  await dueRows(40);
  // 60 ms an attempt, two slots: ~0.03 attempts per ms, 50 ms of which is under the floor of 4.
  const { started, limits, peakHeld } = await run(40, 60);
  expect(started).toBe(40);
  expect(limits.length).toBeGreaterThan(40 / (2 + 4));
  expect(Math.max(...limits)).toBeLessThanOrEqual(2 + 4);
  // Rows asked for and not yet finished, after every step: never more than the slots and the floor.
  expect(peakHeld).toBeLessThanOrEqual(2 + 4);
}, 60_000);

test("after a quiet spell the busy rate no longer counts: the next claims are back at the floor", async () => {
  const d = drivenPump();
  d.pump.setRunning(true);
  try {
    await dueRows(400);
    void d.pump.wake();
    while (d.counts.finished < 400) await d.step(1, 400);
    expect(Math.max(...d.limits)).toBeGreaterThan(2 + 4); // the busy rate was measured
    d.rateClock.advance(3 * RATE_WINDOW_MS); // nothing finishes
    d.limits.length = 0;
    await dueRows(40);
    await d.pump.wake(); // resolves once this pass's claims are made
    expect(d.limits.length).toBeGreaterThan(0);
    expect(Math.max(...d.limits)).toBeLessThanOrEqual(2 + 4);
  } finally {
    await d.stop();
  }
}, 60_000);
