/**
 * Lookups of finished shipments (docs/shipments.md): a terminal shipment fetched moments ago is answered
 * from that fetch without calling the courier, still counted; in-progress shipments always call it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildApp } from "../../src/app.ts";
import { loadConfig } from "../../src/configure.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext();
});
afterAll(() => ctx.close());

const track = (awb: string) => `/v1/track?courier=delhivery&tracking_number=${awb}`;

describe("lookups of finished shipments", () => {
  test("a delivered AWB looked up again within the window: same answer, no courier call, FetchTime 0.000, counted", async () => {
    const a = await ctx.account("starter");
    const awb = "1234567100010"; // digit 0: delivered
    const [r1, b1] = await ctx.call(track(awb), { key: a.key });
    expect(r1.status).toBe(200);
    expect(b1.data.ShipmentState).toBe("delivered");
    expect(ctx.sim.calls("delhivery", awb)).toBe(1);
    ctx.clock.advance(299_000);
    const [r2, b2] = await ctx.call(track(awb), { key: a.key });
    expect(r2.status).toBe(200);
    expect(ctx.sim.calls("delhivery", awb)).toBe(1);
    expect(b2.data.FetchTime).toBe("0.000");
    expect({ ...b2.data, FetchTime: "", ExecutionTime: "" }).toEqual({ ...b1.data, FetchTime: "", ExecutionTime: "" });
    expect(b2.usage.used).toBe(b1.usage.used + 1);
    // Past the window the courier is asked again.
    ctx.clock.advance(2_000);
    const [r3] = await ctx.call(track(awb), { key: a.key });
    expect(r3.status).toBe(200);
    expect(ctx.sim.calls("delhivery", awb)).toBe(2);
  });

  test("a shipment in progress calls the courier on every lookup", async () => {
    const a = await ctx.account("starter");
    const awb = "1234567100021"; // digit 1: in transit
    for (let i = 0; i < 3; i++) expect((await ctx.call(track(awb), { key: a.key }))[0].status).toBe(200);
    expect(ctx.sim.calls("delhivery", awb)).toBe(3);
  });

  test("TERMINAL_REUSE_SECONDS=0 calls the courier every time; a demo lookup reuses like /v1/track", async () => {
    expect(loadConfig({}).terminalReuseSeconds).toBe(300);
    const { terminalReuseSeconds } = loadConfig({ TERMINAL_REUSE_SECONDS: "0" });
    expect(terminalReuseSeconds).toBe(0);
    const app = buildApp({ ...ctx.deps, config: { ...ctx.deps.config, terminalReuseSeconds } });
    const a = await ctx.account("starter");
    const awb = "1234567100030";
    for (let i = 0; i < 2; i++) {
      const res = await app.handle(new Request(`http://localhost${track(awb)}`, { headers: { "x-api-key": a.key } }));
      expect(res.status).toBe(200);
    }
    expect(ctx.sim.calls("delhivery", awb)).toBe(2);
    const demo = "1234567100040";
    for (let i = 0; i < 2; i++)
      expect((await ctx.call(`/demo/track?courier=delhivery&tracking_number=${demo}`))[0].status).toBe(200);
    expect(ctx.sim.calls("delhivery", demo)).toBe(1);
  });
});
