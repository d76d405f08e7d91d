/**
 * Every catalogue courier answers a delivered shipment
 * for a sandbox number in its format ending in 0, through the real adapter
 * code (direct adapters, or the 17TRACK asynchronous path), via GET /v1/track.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildApp } from "../../src/app.ts";
import { loadConfig } from "../../src/configure.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { COURIERS } from "../../src/modules/couriers/catalogue.ts";
import { createCourierBackends } from "../../src/modules/couriers/registry.ts";
import { startSimulator } from "../../src/sandbox/server.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
let key: string;
beforeAll(async () => {
  // No timeout is tested here: the default 10 s courier budget, not the helper's 1.5 s, so that DTDC's two calls
  // (token, then tracking) made alongside every other courier's still fit on a loaded 2-core machine.
  ctx = await testContext({ COURIER_TIMEOUT_MS: "10000" });
  key = (await ctx.account("business")).key;
});
afterAll(() => ctx.close());

describe("every catalogue courier through GET /v1/track", () => {
  test("the catalogue's example number (ending in 0) is delivered, for all couriers at once", async () => {
    const results = await Promise.all(
      COURIERS.map(async (c) => {
        const [res, body] = await ctx.call(
          `/v1/track?courier=${c.slug}&tracking_number=${encodeURIComponent(c.awb.example)}`,
          { key },
        );
        return {
          slug: c.slug,
          status: res.status,
          state: body?.data?.ShipmentState,
          courierName: body?.data?.Checkpoints?.[0]?.CourierName,
        };
      }),
    );
    for (const r of results)
      expect(r, r.slug).toMatchObject({
        status: 200,
        state: "delivered",
        courierName: COURIERS.find((c) => c.slug === r.slug)!.name,
      });
  });

  test("50 parallel /v1/track calls for one AWB, all in flight together, make one backend call", async () => {
    // A courier that takes 3 s to answer (ample margin over the requests' own database work), so all 50 requests are waiting on it at the same time.
    const sim = startSimulator({ clock: ctx.clock, stepSeconds: 3600, asyncSeconds: 1, latencyMs: 3000 });
    const config = loadConfig({ COURIER_MODE: "sandbox", COURIER_TIMEOUT_MS: "10000" });
    const backends = createCourierBackends({ config, clock: ctx.clock, log: silentLogger, simulator: sim });
    try {
      const app = buildApp({ ...ctx.deps, config, backends });
      const awb = "1234567890551"; // digit 1: in transit
      const req = () =>
        new Request(`http://localhost/v1/track?courier=delhivery&tracking_number=${awb}`, {
          headers: { "x-api-key": key },
        });
      const responses = await Promise.all(Array.from({ length: 50 }, () => app.handle(req())));
      expect(responses.map((r) => r.status)).toEqual(Array(50).fill(200));
      expect(sim.calls("delhivery", awb)).toBe(1);
    } finally {
      await backends.close();
      await sim.stop();
    }
  });
});

describe("live mode", () => {
  test("a courier without credentials answers 400 COURIER_NOT_SUPPORTED; one with credentials is live", async () => {
    const config = loadConfig({ COURIER_MODE: "live", DHL_API_KEY: "k", DHL_BASE_URL: "http://127.0.0.1:9" });
    const backends = createCourierBackends({ config, clock: ctx.clock, log: silentLogger });
    try {
      const app = buildApp({ ...ctx.deps, config, backends });
      const res = await app.handle(
        new Request("http://localhost/v1/track?courier=delhivery&tracking_number=1234567890120", {
          headers: { "x-api-key": key },
        }),
      );
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe("COURIER_NOT_SUPPORTED");
      const described = backends.describe();
      expect(described.dhl).toBe("live");
      expect(described.delhivery).toBe("unavailable");
    } finally {
      await backends.close();
    }
  });
});
