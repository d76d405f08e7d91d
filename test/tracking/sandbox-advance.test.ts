/**
 * The sandbox on demand: `POST /v1/sandbox/shipments/{courier}/{tracking_number}/advance` moves a simulated shipment
 * to its next scripted state, re-checks it through the normal path, and its webhook reaches a loopback receiver;
 * digit 3's failed attempt carries its normalised reason (docs/ndr.md).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Resolver } from "../../src/modules/webhooks/delivery/address-guard.ts";
import { createDeliveryWorker, type DeliveryWorker } from "../../src/modules/webhooks/delivery/worker.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { startReceiver, webhookEnv, type Receiver } from "../webhooks/receiver.ts";

const resolver: Resolver = async (host) => {
  if (host !== "receiver.test") throw Object.assign(new Error(`fake resolver: ${host} unknown`), { code: "ENOTFOUND" });
  return [{ address: "127.0.0.1", family: 4 }];
};

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

describe("sandbox advance", () => {
  test("moves a digit-1 shipment to its next state now, and the webhook arrives", async () => {
    const acc = await ctx.account("business");
    const [wh, whBody] = await ctx.call("/v1/webhooks", {
      key: acc.key,
      method: "POST",
      body: JSON.stringify({
        url: rx.url("/adv"),
        events: ["tracking.updated", "tracking.in_transit", "tracking.out_for_delivery", "tracking.delivered"],
        mode: "live",
      }),
    });
    expect(wh.status).toBe(201);
    expect(whBody.data.id).toBeString();
    const [r0, b0] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890111", { key: acc.key });
    expect(r0.status).toBe(200);
    const before = b0.data.Checkpoints.length;
    const [r1, b1] = await ctx.call("/v1/sandbox/shipments/delhivery/1234567890111/advance", {
      key: acc.key,
      method: "POST",
    });
    expect(r1.status).toBe(200);
    expect(b1.data.Checkpoints.length).toBe(before + 1);
    expect(b1.data.ShipmentState).toBe("intransit");
    expect(await worker.runOnce()).toBe(1);
    const got = rx.on("/adv");
    expect(got.length).toBe(1);
    const payload = JSON.parse(got[0]!.text);
    expect(payload.data.tracking_number).toBe("1234567890111");
    expect(payload.data.checkpoints.length).toBe(before + 1);
    // Twice more: reached destination, then out for delivery.
    await ctx.call("/v1/sandbox/shipments/delhivery/1234567890111/advance", { key: acc.key, method: "POST" });
    const [, b3] = await ctx.call("/v1/sandbox/shipments/delhivery/1234567890111/advance", {
      key: acc.key,
      method: "POST",
    });
    expect(b3.data.ShipmentState).toBe("outfordelivery");
  });

  test("needs an API key", async () => {
    const [res] = await ctx.call("/v1/sandbox/shipments/delhivery/1234567890111/advance", { method: "POST" });
    expect(res.status).toBe(401);
  });

  test("digit 3: the failed attempt's reason is customer_unavailable; …263 gives out_of_delivery_area", async () => {
    const acc = await ctx.account("business");
    const [, b] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890133", { key: acc.key });
    const failed = b.data.Checkpoints.find((c: { CheckpointState: string }) => c.CheckpointState === "exception");
    expect(failed.ReasonCode).toBe("customer_unavailable");
    expect(b.data.Checkpoints.filter((c: { ReasonCode: string }) => c.ReasonCode === "").length).toBe(
      b.data.Checkpoints.length - 1,
    );
    const [, c] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890263", { key: acc.key });
    expect(
      c.data.Checkpoints.find((x: { CheckpointState: string }) => x.CheckpointState === "exception").ReasonCode,
    ).toBe("out_of_delivery_area");
  });
});

describe("outside sandbox mode", () => {
  test("the route does not exist and is not in the document", async () => {
    const live = await testContext({ COURIER_MODE: "live" });
    try {
      const acc = await live.account("business");
      const [res] = await live.call("/v1/sandbox/shipments/delhivery/1234567890111/advance", {
        key: acc.key,
        method: "POST",
      });
      expect(res.status).toBe(404);
      const [, doc] = await live.call("/openapi.json");
      expect(Object.keys(doc.paths).some((p) => p.includes("/sandbox/"))).toBe(false);
    } finally {
      await live.close();
    }
  });
});
