/**
 * Observability of following: `GET /metrics` exposes the counters (Prometheus
 * text); the scheduler's Croner job runs re-checks on its own once started,
 * and nothing after `stop()`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Cron } from "croner";
import { runRecheckBatch, type RecheckStats } from "../../src/modules/following/recheck.ts";
import { createScheduler } from "../../src/scheduler/index.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { eventsOf, seedMany, shipmentRow, unscheduleRows } from "./helpers.ts";
import { eventually } from "../helpers/eventually.ts";

let ctx: TestContext;
let acc: { id: string; key: string };
beforeAll(async () => {
  ctx = await testContext({
    SANDBOX_STEP_SECONDS: "60",
    RECHECK_INTERVAL_SECONDS: "60",
    METRICS_TOKEN: "metrics-token-0123456789",
  });
  acc = await ctx.account("growth");
});
afterAll(() => ctx.close());

/** The value of one sample line, or undefined. */
function sample(text: string, name: string, labels = ""): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.split(" ").at(-1));
}

describe("GET /metrics", () => {
  test("Prometheus text with re-checks, events per type, courier errors per courier, and the due backlog from the database", async () => {
    await seedMany(ctx, acc.id, [
      ["delhivery", "4234567890111"],
      ["delhivery", "4234567890116"], // 503 → backend error
    ]);
    await runRecheckBatch(ctx.deps, { random: () => 0.5 });
    // Three more due now, not re-checked: the backlog.
    const backlogIds = await seedMany(ctx, acc.id, [
      ["dhl", "1234567891"],
      ["dhl", "1234567801"],
      ["ups", "1Z12345E0205271681"],
    ]);

    const [res, text] = await ctx.call("/metrics", { headers: { authorization: "Bearer metrics-token-0123456789" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/plain");
    expect(text).toContain("# TYPE courier_tracking_rechecks_total counter");
    expect(
      sample(text, "courier_tracking_rechecks_total", '{courier="delhivery",outcome="changed"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, "courier_tracking_rechecks_total", '{courier="delhivery",outcome="failed"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, "courier_tracking_events_emitted_total", '{type="tracking.in_transit"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, "courier_tracking_courier_errors_total", '{courier="delhivery",kind="backend",retryable="true"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(text, "courier_tracking_recheck_due_backlog")).toBe(backlogIds.length);
    expect(text).toContain("courier_tracking_recheck_drain_seconds_bucket");
    // Counts only: no tracking numbers or account ids in the output.
    expect(text).not.toContain("4234567890111");
    expect(text).not.toContain(acc.id);

    // Not in the public API description.
    const [, doc] = await ctx.call("/openapi.json");
    expect(Object.keys(doc.paths)).not.toContain("/metrics");
    await unscheduleRows(ctx);
  }, 30_000);
});

describe("scheduler", () => {
  test("start() runs re-checks on its own (Croner, overrun-protected); stop() drains and nothing runs after", async () => {
    const [id] = await seedMany(ctx, acc.id, [["delhivery", "5234567890111"]]);
    const drains: RecheckStats[] = [];
    const scheduler = createScheduler(ctx.deps, {
      recheckPattern: "* * * * * *",
      housekeepingPattern: "* * * * * *",
      recheck: { random: () => 0.5 },
      onDrain: (s) => drains.push(s),
    });
    await scheduler.start();
    await eventually(() => ctx.sim.calls("delhivery", "5234567890111") > 0, 15_000);
    await scheduler.stop({ timeout: 5_000 });
    expect(ctx.sim.calls("delhivery", "5234567890111")).toBe(1);
    expect(await eventsOf(ctx, id!)).toEqual(["tracking.in_transit/in_transit"]);
    expect((await shipmentRow(ctx, "delhivery", "5234567890111"))!.nextCheckAt!.getTime()).toBe(
      ctx.clock.now() + 60_000,
    );

    // Stopped: due again (clock moved), yet nobody re-checks it.
    const seen = drains.length;
    ctx.clock.advance(60_000);
    // A job on the same pattern, started now, ticks twice: a tick of the stopped job's pattern has passed meanwhile.
    let ticks = 0;
    const control = new Cron("* * * * * *", () => void ticks++);
    try {
      expect(await eventually(() => ticks >= 2)).toBe(true);
    } finally {
      control.stop();
    }
    expect(drains.length).toBe(seen);
    expect(ctx.sim.calls("delhivery", "5234567890111")).toBe(1);
  }, 30_000);
});
