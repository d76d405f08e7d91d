/** The scheduler's `health` job: it adds this process's pending call counts, then evaluates (docs/courier-health.md). */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createScheduler } from "../../src/scheduler/index.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { eventually } from "../helpers/eventually.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext();
});
afterAll(() => ctx.close());

test("a run writes the pending counts and the states, and the cache serves them to /v1/couriers", async () => {
  const lastMinute = ctx.clock.now() - 60_000;
  for (let i = 0; i < 25; i++) ctx.deps.services.courierCalls.add("ekart", "ok", 200, lastMinute);
  const scheduler = createScheduler(ctx.deps, { jobs: ["health"], healthPattern: "* * * * * *" });
  await scheduler.start();
  try {
    const evaluated = async () => {
      const [row] = await ctx.tdb.sql`select state, figures from courier_health where courier = 'ekart'`;
      return row?.state === "operational" && row.figures.windows["15m"].calls === 25;
    };
    expect(await eventually(evaluated, 20_000)).toBe(true);
  } finally {
    await scheduler.stop();
  }
  const { key } = await ctx.account();
  await ctx.deps.services.courierHealth.refresh();
  const [, list] = await ctx.call("/v1/couriers", { key });
  expect(list.data.couriers.find((c: { slug: string }) => c.slug === "ekart").health.state).toBe("operational");
}, 30_000);
