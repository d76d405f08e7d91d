/**
 * The sandbox can degrade a courier (SANDBOX_DEGRADE, or the simulator's `degrade`): real lookups against the twin,
 * counted by every call, take its state to degraded, then down, then back to operational, one event per transition.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/configure.ts";
import { evaluateHealth, type Transition } from "../../src/modules/courier-health/evaluate.ts";
import { courierBySlug } from "../../src/modules/couriers/catalogue.ts";
import { fanOutCourierEvent } from "../../src/modules/webhooks/delivery/outbox.ts";
import { failsAt, parseDegrade } from "../../src/sandbox/server.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
let hook: string;
let key: string;
const delhivery = courierBySlug("delhivery")!;

beforeAll(async () => {
  ctx = await testContext();
  const a = await ctx.account("business");
  key = a.key;
  const [res, body] = await ctx.call("/v1/webhooks", {
    method: "POST",
    key: a.key,
    body: JSON.stringify({
      url: "https://example.com/hooks",
      events: ["courier.down", "courier.recovered"],
      mode: "live",
    }),
  });
  expect(res.status).toBe(201);
  hook = body.data.id;
  ctx.clock.set(Date.UTC(2026, 11, 1, 9, 0, 30));
});

afterAll(() => ctx.close());

describe("the setting", () => {
  test("SANDBOX_DEGRADE parses backend:failPercent:delayMs; an unknown backend is a configuration error", () => {
    expect(parseDegrade(["delhivery:30:2500"])).toEqual({ delhivery: { failPercent: 30, delayMs: 2500 } });
    expect(loadConfig({ SANDBOX_DEGRADE: "delhivery:30:0,dtdc:100:0" }).sandboxDegrade).toEqual([
      "delhivery:30:0",
      "dtdc:100:0",
    ]);
    expect(() => loadConfig({ SANDBOX_DEGRADE: "nosuch:30:0" })).toThrow(/SANDBOX_DEGRADE/);
    expect(() => loadConfig({ SANDBOX_DEGRADE: "delhivery:30" })).toThrow(/SANDBOX_DEGRADE/);
  });

  test("exactly the given share of calls fails, spread evenly", () => {
    const fails = (p: number) => Array.from({ length: 100 }, (_, i) => failsAt(i + 1, p)).filter(Boolean).length;
    expect([0, 1, 30, 70, 100].map(fails)).toEqual([0, 1, 30, 70, 100]);
    expect(Array.from({ length: 10 }, (_, i) => failsAt(i + 1, 50))).toEqual([
      false,
      true,
      false,
      true,
      false,
      true,
      false,
      true,
      false,
      true,
    ]);
  });

  test("a delay slows every answer of the twin: the call's latency lands in a bucket at or above it", async () => {
    ctx.sim.degrade("delhivery", { failPercent: 0, delayMs: 300 });
    await ctx.deps.backends.lookup(delhivery, "5555555555121");
    ctx.sim.degrade("delhivery", null);
    await ctx.deps.services.courierCalls.flush();
    const [row] = await ctx.tdb.sql`select latency from courier_call_buckets where courier = 'delhivery'`;
    // LATENCY_BUCKETS_MS: 100, 250, 500…: the call sits in a bucket from 250 ms up.
    expect(row!.latency.slice(0, 2)).toEqual([0, 0]);
    await ctx.tdb.sql`delete from courier_call_buckets`;
  });
});

/** `n` minutes of 30 real lookups each against the (maybe degraded) twin, each minute followed by an evaluation. */
async function minutes(n: number): Promise<Transition[]> {
  const out: Transition[] = [];
  for (let m = 0; m < n; m++) {
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        ctx.deps.backends.lookup(delhivery, `55555${String(m * 100 + i).padStart(5, "0")}121`).catch(() => undefined),
      ),
    );
    await ctx.deps.services.courierCalls.flush();
    ctx.clock.advance(60_000);
    out.push(...((await evaluateHealth(ctx.tdb.db, ctx.clock.now(), fanOutCourierEvent)) ?? []));
  }
  return out;
}

test("a degraded sandbox courier goes degraded, then down, then operational again", async () => {
  expect(await minutes(2)).toEqual([]);
  ctx.sim.degrade("delhivery", { failPercent: 20, delayMs: 0 });
  expect((await minutes(12)).map((t) => [t.courier, t.to])).toEqual([["delhivery", "degraded"]]);
  ctx.sim.degrade("delhivery", { failPercent: 70, delayMs: 0 });
  expect((await minutes(20)).map((t) => t.to)).toEqual(["down"]);
  ctx.sim.degrade("delhivery", null);
  expect((await minutes(27)).map((t) => t.to)).toEqual(["operational"]);
  const [, health] = await ctx.call("/v1/couriers/delhivery/health", { key });
  expect(health.data).toMatchObject({ state: "operational", incident: null });
  expect(health.data.windows["1h"].shares.server_error).toBeGreaterThan(0.2);
  // Only the events the webhook lists reach it: down and recovered, not degraded.
  const rows = await ctx.tdb.sql`select event_type from deliveries where webhook_id = ${hook} order by sequence`;
  expect(rows.map((r) => r.event_type)).toEqual(["courier.down", "courier.recovered"]);
}, 120_000);
