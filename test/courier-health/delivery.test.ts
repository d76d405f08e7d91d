/**
 * Courier events as a receiver gets them: the delivery worker sends a transition to a live webhook that lists it
 * (signed, sequenced, the figures that triggered it), and a test fire of a courier event sends a sample of the same
 * shape. Real receiver on loopback, fake clock.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { Value } from "@sinclair/typebox/value";
import { CourierEventPayloadSchema } from "../../src/modules/courier-health/event.ts";
import type { Resolver } from "../../src/modules/webhooks/delivery/address-guard.ts";
import { createDeliveryWorker, type DeliveryWorker } from "../../src/modules/webhooks/delivery/worker.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";
import { scriptMinutes } from "./script.ts";

const resolver: Resolver = async () => [{ address: "127.0.0.1", family: 4 }];
let ctx: TestContext;
let rx: Receiver;
let worker: DeliveryWorker;

beforeAll(async () => {
  ctx = await testContext(await webhookEnv());
  rx = await startReceiver();
  worker = createDeliveryWorker({ ...ctx.deps, resolver });
});
afterAll(async () => {
  await worker.stop();
  rx.stop();
  await ctx.close();
});

async function hook(key: string, path: string, events: string[], mode: "live" | "test") {
  const [res, body] = await ctx.call("/v1/webhooks", {
    key,
    method: "POST",
    body: JSON.stringify({ url: rx.url(path), events, mode }),
  });
  expect(res.status).toBe(201);
  return body.data as { id: string; secret: string };
}

test("a transition reaches the live webhook that lists it, signed, with the figures that triggered it", async () => {
  const acc = await ctx.account("business");
  const wh = await hook(acc.key, "/live", ["courier.down"], "live");
  await hook(acc.key, "/other", ["tracking.delivered"], "live");
  ctx.clock.set(Date.UTC(2026, 10, 5, 10, 0, 30));
  const moved = await scriptMinutes(ctx, "dtdc", 12, { ok: 5, timeout: 25 });
  expect(moved.map((t) => t.event)).toEqual(["courier.down"]);
  expect(await worker.runOnce()).toBe(1);
  const [got] = rx.on("/live");
  expect(rx.on("/other")).toEqual([]);
  expect(got!.headers["x-webhook-event"]).toBe("courier.down");
  expect(got!.headers["x-webhook-event-id"]).toBe(moved[0]!.eventId);
  expect(got!.headers["x-webhook-sequence"]).toBe("1");
  expect(Value.Check(CourierEventPayloadSchema, got!.json)).toBe(true);
  expect(got!.json).toMatchObject({
    event: "courier.down",
    sequence: 1,
    data: { courier: "dtdc", state: "down", previous_state: "unknown", incident_id: moved[0]!.incidentId },
  });
  expect(got!.json.data.figures.shares.timeout).toBeGreaterThan(0.5);
  const signature = `sha256=${createHmac("sha256", wh.secret).update(got!.raw).digest("hex")}`;
  expect(got!.headers["x-service-signature"]).toBe(signature);
});

test("a test fire of a courier event sends a sample of the same shape", async () => {
  const acc = await ctx.account("free");
  const wh = await hook(acc.key, "/test", ["courier.degraded", "tracking.delivered"], "test");
  const [res, body] = await ctx.call(`/v1/webhooks/${wh.id}/test`, { key: acc.key, method: "POST" });
  expect([res.status, body.data?.delivered]).toEqual([200, true]);
  const [got] = rx.on("/test");
  expect(Value.Check(CourierEventPayloadSchema, got!.json)).toBe(true);
  expect(got!.json.data.courier).toBe("synthetic-test-delhivery");
  const expected = `sha256=${createHmac("sha256", wh.secret).update(got!.raw).digest("hex")}`;
  expect(got!.headers["x-service-signature"]).toBe(expected);
});
