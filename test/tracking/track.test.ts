import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { eq, sql } from "drizzle-orm";
import { follows, shipments } from "../../src/db/schema/index.ts";
import { setStatus, setUsage } from "../../src/modules/accounts/service.ts";
import { DemoTrackResponse, TrackResponse } from "../../src/modules/tracking/model.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
let growth: { id: string; key: string };
beforeAll(async () => {
  ctx = await testContext();
  growth = await ctx.account("growth");
});
afterAll(() => ctx.close());

const track = (courier: string, n: string, key = growth.key) =>
  ctx.call(`/v1/track?courier=${courier}&tracking_number=${encodeURIComponent(n)}`, { key });

describe("GET /v1/track through the simulator", () => {
  test("digit 0: delivered, full history newest first, POD, usage", async () => {
    const [res, body] = await track("delhivery", "1234567890120");
    expect(res.status).toBe(200);
    expect(Value.Check(TrackResponse, body)).toBe(true);
    const d = body.data;
    expect(d.ShipmentState).toBe("delivered");
    expect(d.MostRecentStatus).toBe("Delivered");
    expect(d.Checkpoints).toHaveLength(7);
    expect(d.Checkpoints[0].CheckpointState).toBe("delivered");
    expect(d.Checkpoints.at(-1).CheckpointState).toBe("pending");
    expect(d.Checkpoints[0].CourierName).toBe("Delhivery");
    expect(d.Checkpoints[0].Date).toMatch(/^\d{2}-[A-Z][a-z]{2}-\d{4}$/);
    expect(d.Checkpoints[0].Time).toMatch(/^\d{2}:\d{2}$/);
    expect(d.isEmptyTable).toBe(false);
    expect(d.Result).toBe("success");
    expect(d.FetchTime).toMatch(/^\d+\.\d{3}$/);
    expect(d.ExecutionTime).toMatch(/^\d+\.\d{3}$/);
    expect(d.CourierHasNoRecordOfShipment).toBe(false);
    expect(body.usage).toEqual({ used: 1, quota: 150000, plan: "growth", percent: 0 });
    expect(res.headers.get("ratelimit-limit")).toBe("600");
  });

  test("digit 1 advances one checkpoint per step; the account follows it", async () => {
    const n = "1234567890111";
    const [, first] = await track("delhivery", n);
    expect(first.data.ShipmentState).toBe("intransit");
    expect(first.data.Checkpoints).toHaveLength(3);
    ctx.clock.advance(3600_000);
    const [, second] = await track("delhivery", n);
    expect(second.data.Checkpoints).toHaveLength(4);
    const row = (await ctx.tdb.db.select().from(shipments).where(eq(shipments.trackingNumber, n)))[0]!;
    expect(row.followers).toBe(1);
    expect((await ctx.tdb.sql`select 1 from recheck_schedule where shipment_id = ${row.id}`).length).toBe(1);
    const f = await ctx.tdb.db.select().from(follows).where(eq(follows.shipmentId, row.id));
    expect(f.map((x) => x.accountId)).toEqual([growth.id]);
  });

  test("digit 7: manifested, no scans → pending, isEmptyTable", async () => {
    const [res, body] = await track("delhivery", "1234567890127");
    expect(res.status).toBe(200);
    expect(body.data.ShipmentState).toBe("pending");
    expect(body.data.isEmptyTable).toBe(true);
    expect(body.data.Checkpoints).toEqual([]);
  });

  test("digit 8: cancelled; digit 3: failed attempt (exception) with the reason in AdditionalInfo", async () => {
    const [, c] = await track("delhivery", "1234567890128");
    expect(c.data.ShipmentState).toBe("cancelled");
    const [, x] = await track("delhivery", "1234567890133");
    expect(x.data.ShipmentState).toBe("exception");
    expect(x.data.MostRecentStatus).toBe("Delivery attempt failed");
    expect(x.data.AdditionalInfo).toBe("Consignee not available");
  });

  test("digits 4, 5, 6 → 404, 504, 502; none consumes quota", async () => {
    const a = await ctx.account("free");
    const expected: [string, number, string][] = [
      ["1234567890124", 404, "TRACKING_NOT_FOUND"],
      ["1234567890125", 504, "TIMEOUT"],
      ["1234567890126", 502, "SERVICE_ERROR"],
    ];
    for (const [n, status, code] of expected) {
      const [res, body] = await track("delhivery", n, a.key);
      expect(res.status).toBe(status);
      expect(body).toEqual({ success: false, error: { code, message: expect.any(String) } });
    }
    const [, ok] = await track("delhivery", "1234567890120", a.key);
    expect(ok.usage.used).toBe(1);
  });

  test("demo: no key, no usage, no follow; 5 per hour per IP then 429 with Retry-After", async () => {
    const n = "1234567890220";
    for (let i = 0; i < 5; i++) {
      const [res, body] = await ctx.call(`/demo/track?courier=delhivery&tracking_number=${n}`);
      expect(res.status).toBe(200);
      expect(Value.Check(DemoTrackResponse, body)).toBe(true);
      expect(body.usage).toBeUndefined();
    }
    const [res, body] = await ctx.call(`/demo/track?courier=delhivery&tracking_number=${n}`);
    expect(res.status).toBe(429);
    expect(body.error.code).toBe("DEMO_RATE_LIMITED");
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(3500);
    const row = (await ctx.tdb.db.select().from(shipments).where(eq(shipments.trackingNumber, n)))[0]!;
    expect(row.followers).toBe(0);
    ctx.clock.advance(3600_000 + 1000);
    const [again] = await ctx.call(`/demo/track?courier=delhivery&tracking_number=${n}`);
    expect(again.status).toBe(200);
  });
});

describe("validation and errors", () => {
  test("422 lists every problem at once with loc and pydantic types", async () => {
    const [res, body] = await ctx.call("/v1/track", { key: growth.key });
    expect(res.status).toBe(422);
    expect(body.detail).toEqual([
      { loc: ["query", "courier"], msg: "Field required", type: "missing" },
      { loc: ["query", "tracking_number"], msg: "Field required", type: "missing" },
    ]);
    const [r2, b2] = await track("delhivery", "9".repeat(500));
    expect(r2.status).toBe(422);
    expect(b2.detail[0]).toMatchObject({ loc: ["query", "tracking_number"], type: "string_too_long" });
  });

  test("unknown courier → 404 with did_you_mean; wrong format → 400 INVALID_TRACKING_NUMBER (no quota used)", async () => {
    const a = await ctx.account("free");
    const [r1, b1] = await track("delhivry", "1234567890120", a.key);
    expect(r1.status).toBe(404);
    expect(b1.error).toMatchObject({ code: "COURIER_NOT_FOUND", did_you_mean: "delhivery" });
    for (const bad of ["12 34", "abc", "' OR 1=1 --", "١٢٣٤٥٦٧٨٩٠١٢", "12345/67890"]) {
      const [r, b] = await track("delhivery", bad, a.key);
      expect(r.status).toBe(400);
      expect(b.error.code).toBe("INVALID_TRACKING_NUMBER");
    }
    // Control characters are not text a tracking number can hold: refused by the schema, before the format check.
    const [rc, bc] = await track("delhivery", "\u0000\u0001", a.key);
    expect(rc.status).toBe(422);
    expect(bc.detail).toEqual([
      { loc: ["query", "tracking_number"], msg: expect.any(String), type: "string_pattern_mismatch" },
    ]);
    const [, ok] = await track("delhivery", " 1234-5678-90120 ", a.key);
    expect(ok.usage.used).toBe(1);
  });

  test("402 ACCOUNT_NEEDS_ATTENTION and QUOTA_EXCEEDED (message ends with the upgrade URL)", async () => {
    const a = await ctx.account("free");
    await setStatus(ctx.tdb.db, a.id, "needs_attention");
    const [r1, b1] = await track("delhivery", "1234567890120", a.key);
    expect(r1.status).toBe(402);
    expect(b1.error.code).toBe("ACCOUNT_NEEDS_ATTENTION");
    await setStatus(ctx.tdb.db, a.id, "active");
    await setUsage(ctx.tdb.db, a.id, 100, ctx.clock.now());
    const [r2, b2] = await track("delhivery", "1234567890120", a.key);
    expect(r2.status).toBe(402);
    expect(b2.error.code).toBe("QUOTA_EXCEEDED");
    expect(b2.error.message).toEndWith("https://localhost:8443/dashboard/billing");
  });

  test("quota is exact under concurrency: 20 parallel calls with 3 units left → exactly 3 × 200", async () => {
    // Pro: 50,000 a month and 300 a minute, so the per-minute limit stays out of the way.
    const a = await ctx.account("pro");
    await setUsage(ctx.tdb.db, a.id, 49_997, ctx.clock.now());
    const numbers = Array.from({ length: 20 }, (_, i) => `12345678${String(i).padStart(3, "0")}0`);
    const results = await Promise.all(numbers.map((n) => track("delhivery", n, a.key).then(([r]) => r.status)));
    expect(results.filter((s) => s === 200)).toHaveLength(3);
    expect(results.filter((s) => s === 402)).toHaveLength(17);
    const used = await ctx.tdb.db.execute<{ used: number }>(
      sql`select used from usage_counters where account_id = ${a.id}`,
    );
    expect(used[0]!.used).toBe(50_000);
  });
});
