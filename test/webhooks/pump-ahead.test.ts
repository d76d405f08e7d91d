/**
 * How far ahead the claimer claims (src/modules/webhooks/pump.ts): while attempts finish fast the rows
 * held waiting grow towards `prefetch` (claims get large); while they finish slowly no more than
 * `minPrefetch` wait, so rows are not held from other workers behind slow receivers. Real PostgreSQL;
 * the attempts are stand-ins that take a set time, and every claim's row limit is read off the statement.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type postgres from "postgres";
import { silentLogger } from "../../src/lib/log.ts";
import { createDeliveryPump, RATE_WINDOW_MS } from "../../src/modules/webhooks/pump.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { emit, shipment } from "./fixtures.ts";
import { webhookEnv } from "./receiver.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext(await webhookEnv());
});
afterAll(async () => {
  await ctx.close();
});

/** `sql` that notes the row limit of every claim (the claim statement's last parameter). */
function noting(sql: postgres.Sql) {
  const limits: number[] = [];
  const proxy = new Proxy(sql, {
    apply(target, self, args: [TemplateStringsArray, ...unknown[]]) {
      if (args[0].join("").includes("from delivery_queue q")) limits.push(Number(args[args.length - 1]));
      return Reflect.apply(target, self, args);
    },
  });
  return { sql: proxy, limits };
}

/** A live webhook of a new account and `n` due outbox rows for it. */
async function dueRows(n: number): Promise<void> {
  const acc = await ctx.account("business");
  const [res] = await ctx.call("/v1/webhooks", { key: acc.key, method: "POST", body: JSON.stringify({ url: "https://127.0.0.1:9/w", events: ["tracking.updated"], mode: "live" }) });
  expect(res.status).toBe(201);
  const shp = await shipment(ctx.tdb.db, [acc.id]);
  for (let i = 0; i < n; i++) await emit(ctx.tdb.db, shp, "tracking.updated", new Date(ctx.clock.now()));
}

/** Runs a pump over what is due, each attempt taking `attemptMs`, until `n` attempts started or `forMs` passed. */
async function run(n: number, attemptMs: number, forMs: number) {
  const { sql, limits } = noting(ctx.tdb.sql);
  let started = 0;
  let peakHeld = 0;
  let finished = 0;
  const pump = createDeliveryPump({
    sql,
    clock: ctx.clock,
    log: silentLogger,
    concurrency: 2,
    prefetch: 100,
    minPrefetch: 4,
    refillAt: 1,
    leaseMs: 60_000,
    maxWaitMs: 30_000,
    release: async () => {},
    deliver: async () => {
      started++;
      await Bun.sleep(attemptMs);
      finished++;
    },
  });
  pump.setRunning(true);
  const deadline = Date.now() + forMs;
  void pump.wake();
  while (started < n && Date.now() < deadline) {
    // Rows claimed so far and not finished: in flight plus waiting for a slot.
    peakHeld = Math.max(peakHeld, limits.reduce((a, b) => a + b, 0) - finished);
    await Bun.sleep(5);
  }
  pump.setRunning(false);
  await Promise.allSettled(pump.inFlight());
  return { started, limits, peakHeld };
}

test("attempts that finish fast make the claims grow past the floor, up to the cap", async () => {
  await dueRows(400);
  const { started, limits } = await run(400, 1, 20_000);
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
  const { started, limits, peakHeld } = await run(40, 60, 1_000);
  expect(started).toBeGreaterThan(4);
  expect(started).toBeLessThan(40);
  expect(Math.max(...limits)).toBeLessThanOrEqual(2 + 4);
  // Rows asked for and not yet finished, sampled every 5 ms: never more than the slots and the floor.
  expect(peakHeld).toBeLessThanOrEqual(2 + 4);
}, 60_000);

test("after a quiet spell the busy rate no longer counts: the next claims are back at the floor", async () => {
  const { sql, limits } = noting(ctx.tdb.sql);
  let attemptMs = 1;
  let started = 0;
  const pump = createDeliveryPump({
    sql,
    clock: ctx.clock,
    log: silentLogger,
    concurrency: 2,
    prefetch: 100,
    minPrefetch: 4,
    refillAt: 1,
    leaseMs: 60_000,
    maxWaitMs: 30_000,
    release: async () => {},
    deliver: async () => {
      started++;
      await Bun.sleep(attemptMs);
    },
  });
  pump.setRunning(true);
  try {
    await dueRows(400);
    void pump.wake();
    const deadline = Date.now() + 20_000;
    while (started < 400 && Date.now() < deadline) await Bun.sleep(5);
    expect(Math.max(...limits)).toBeGreaterThan(2 + 4); // the busy rate was measured
    await Promise.allSettled(pump.inFlight());
    await Bun.sleep(3 * RATE_WINDOW_MS); // nothing finishes
    limits.length = 0;
    attemptMs = 60;
    await dueRows(40);
    await pump.wake();
    await Bun.sleep(300);
    expect(limits.length).toBeGreaterThan(0);
    expect(Math.max(...limits)).toBeLessThanOrEqual(2 + 4);
  } finally {
    pump.setRunning(false);
    await Promise.allSettled(pump.inFlight());
  }
}, 60_000);
