/**
 * The delivery SLO's measure (docs/operations/slo.md): `courier_tracking_webhook_first_attempt_delay_seconds`
 * observes, once per delivery, the time from the event's commit to its first attempt, on the worker's clock; a
 * retry adds nothing. Real worker, real receiver on loopback, the fake clock.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { serviceRegistry } from "../../src/modules/metrics/registry.ts";
import { createDeliveryWorker, type DeliveryWorker } from "../../src/modules/webhooks/delivery/worker.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { emit, shipment } from "./fixtures.ts";
import { startReceiver, webhookEnv, type Receiver } from "./receiver.ts";

const NAME = "courier_tracking_webhook_first_attempt_delay_seconds";
let ctx: TestContext;
let rx: Receiver;
let worker: DeliveryWorker;
beforeAll(async () => {
  ctx = await testContext(await webhookEnv({ WEBHOOK_RETRY_SCHEDULE: "1,1,1,1,1" }));
  rx = await startReceiver();
  worker = createDeliveryWorker({ ...ctx.deps });
});
afterAll(async () => {
  await worker.stop();
  rx.stop();
  await ctx.close();
});

async function sample(series: string): Promise<number> {
  const text = await serviceRegistry.getSingleMetricAsString(NAME);
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.split(" ")[1]) : 0;
}
const within60 = () => sample(`${NAME}_bucket{le="60",mode="live"}`);
const all = () => sample(`${NAME}_count{mode="live"}`);

test("one observation per delivery at its first attempt: 90 s late is outside 60 s, 5 s inside; retries add none", async () => {
  const acc = await ctx.account("business");
  const [res] = await ctx.call("/v1/webhooks", {
    key: acc.key,
    method: "POST",
    body: JSON.stringify({ url: rx.url("/first"), events: ["tracking.in_transit"], mode: "live" }),
  });
  expect(res.status).toBe(201);
  let answers = 0;
  rx.route("/first", () => new Response(null, { status: ++answers === 1 ? 500 : 200 }));
  const shp = await shipment(ctx.tdb.db, [acc.id]);
  const before = { within: await within60(), all: await all() };

  const t0 = Date.UTC(2026, 10, 5, 10, 0, 0);
  ctx.clock.set(t0);
  expect(await emit(ctx.tdb.db, shp, "tracking.in_transit", new Date(t0))).toBe(1);
  ctx.clock.set(t0 + 90_000);
  expect(await worker.runOnce()).toBe(1); // first attempt, answered 500: retried
  expect([await within60(), await all()]).toEqual([before.within, before.all + 1]);
  ctx.clock.set(t0 + 92_000);
  expect(await worker.runOnce()).toBe(1); // the retry, delivered
  expect(rx.on("/first")).toHaveLength(2);
  expect([await within60(), await all()]).toEqual([before.within, before.all + 1]);

  ctx.clock.set(t0 + 600_000);
  expect(await emit(ctx.tdb.db, shp, "tracking.in_transit", new Date(t0 + 600_000))).toBe(1);
  ctx.clock.set(t0 + 605_000);
  expect(await worker.runOnce()).toBe(1);
  expect([await within60(), await all()]).toEqual([before.within + 1, before.all + 2]);
});
