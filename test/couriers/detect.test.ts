import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { usedThisMonth } from "../../src/modules/accounts/quota.ts";
import { COURIERS } from "../../src/modules/couriers/catalogue.ts";
import { detectCouriers } from "../../src/modules/couriers/detect.ts";
import { CourierDetectResponse } from "../../src/modules/couriers/model.ts";

/** A courier no call was made to yet (docs/courier-health.md). */
const UNKNOWN_HEALTH = { state: "unknown", since: null, success_share_15m: null, p95_ms_15m: null };
import { testContext, type TestContext } from "../helpers/app.ts";

const slugs = (n: string) => detectCouriers(n).map((c) => c.slug);

describe("detectCouriers", () => {
  test.each([
    ["1Z12345E0205271680", "ups"],
    ["EE123456780IN", "indiapost"],
    ["SF1234567890", "shadowfax"],
    ["FMPC1234567890", "ekart"],
    ["D12345670", "dtdc"],
    ["B32242001", "dtdc"],
    ["141123221084922", "xpressbees"],
    ["TBA1234567890", "amazonshipping"],
    ["BLR123456780", "professional"],
    ["9400123456789012345670", "usps"],
    ["JJD0123456789012345678", "dhl"],
  ])("%p → %s first", (n, first) => {
    expect(slugs(n)[0]).toBe(first);
  });

  test("every catalogue example detects its own courier", () => {
    for (const c of COURIERS) expect([c.slug, slugs(c.awb.example).includes(c.slug)]).toEqual([c.slug, true]);
  });

  test("only couriers whose format accepts the number, each once", () => {
    const found = detectCouriers("44330038841");
    expect(found.length).toBeGreaterThan(1);
    for (const c of found) expect(c.awb.pattern.test("44330038841")).toBe(true);
    expect(new Set(found.map((c) => c.slug)).size).toBe(found.length);
    expect(found.map((c) => c.slug)).toContain("bluedart");
    const rest = COURIERS.filter((c) => !found.includes(c));
    for (const c of rest) expect(c.awb.pattern.test("44330038841")).toBe(false);
  });

  test("Indian couriers before international ones; among international, the catch-all DHL range after the narrow FedEx one", () => {
    const found = detectCouriers("1234567890");
    const firstIntl = found.findIndex((c) => c.country === "international");
    expect(firstIntl).toBeGreaterThan(0);
    expect(found.slice(firstIntl).every((c) => c.country === "international")).toBe(true);
    const intl = slugs("123456789012345");
    expect(intl.indexOf("fedex")).toBeLessThan(intl.indexOf("dhl"));
  });

  test("normalises like /v1/track: spaces, hyphens, lower case", () => {
    expect(slugs(" ee 123-456-780 in ")).toEqual(slugs("EE123456780IN"));
    expect(slugs("1z12345e0205271680")[0]).toBe("ups");
  });

  test.each(["", "   ", "hello world!", "<script>", "x".repeat(65), "٣٤٥٦٧٨٩٠١٢", "1".repeat(500)])(
    "no match for %p",
    (n) => {
      expect(detectCouriers(n)).toEqual([]);
    },
  );

  test("deterministic order", () => {
    expect(slugs("1234567890")).toEqual(slugs("1234567890"));
  });
});

describe("GET /v1/couriers/detect", () => {
  let ctx: TestContext;
  let key: string;
  beforeAll(async () => {
    ctx = await testContext();
    key = (await ctx.account("free")).key;
  });
  afterAll(() => ctx.close());

  test("200 with the declared shape, best first", async () => {
    const [res, body] = await ctx.call("/v1/couriers/detect?tracking_number=EE123456780IN", { key });
    expect(res.status).toBe(200);
    expect(Value.Check(CourierDetectResponse, body)).toBe(true);
    expect(body.data.couriers[0]).toEqual({
      slug: "indiapost",
      name: "India Post",
      available: true,
      sandbox: true,
      actions: [],
      rate_budget: null,
      health: UNKNOWN_HEALTH,
    });
    expect(body.data.count).toBe(body.data.couriers.length);
    expect(res.headers.get("ratelimit-limit")).toBe("10");
  });

  test("URL-encoded spaces and lower case are normalised", async () => {
    const [res, body] = await ctx.call(
      `/v1/couriers/detect?tracking_number=${encodeURIComponent("1z 12345e0205271680")}`,
      { key },
    );
    expect(res.status).toBe(200);
    expect(body.data.couriers[0].slug).toBe("ups");
  });

  test("no match → 200 with an empty list", async () => {
    const [res, body] = await ctx.call("/v1/couriers/detect?tracking_number=hello", { key });
    expect(res.status).toBe(200);
    expect(body).toEqual({ success: true, data: { couriers: [], count: 0 } });
  });

  test("missing or over-long tracking_number → 422 in the contract shape", async () => {
    const [res, body] = await ctx.call("/v1/couriers/detect", { key });
    expect(res.status).toBe(422);
    expect(body.detail[0]).toMatchObject({ loc: ["query", "tracking_number"], type: "missing" });
    const [res2, body2] = await ctx.call(`/v1/couriers/detect?tracking_number=${"1".repeat(500)}`, { key });
    expect(res2.status).toBe(422);
    expect(body2.detail[0]).toMatchObject({ loc: ["query", "tracking_number"], type: "string_too_long" });
  });

  test("needs an API key", async () => {
    const [res, body] = await ctx.call("/v1/couriers/detect?tracking_number=EE123456780IN");
    expect(res.status).toBe(401);
    expect(body.error.code).toBe("INVALID_API_KEY");
  });

  test("is not read as a courier slug, and /v1/couriers/{slug} still works", async () => {
    const [, detect] = await ctx.call("/v1/couriers/detect?tracking_number=D12345670", { key });
    expect(detect.data.couriers[0].slug).toBe("dtdc");
    const [res, body] = await ctx.call("/v1/couriers/dtdc", { key });
    expect(res.status).toBe(200);
    expect(body.data).toEqual({
      slug: "dtdc",
      name: "DTDC",
      available: true,
      sandbox: true,
      actions: [],
      rate_budget: null,
      health: UNKNOWN_HEALTH,
    });
  });

  test("does not count against the monthly quota", async () => {
    const { key: k, id } = await ctx.account("free");
    for (let i = 0; i < 3; i++) {
      const [res] = await ctx.call("/v1/couriers/detect?tracking_number=EE123456780IN", { key: k });
      expect(res.status).toBe(200);
    }
    expect(await usedThisMonth(ctx.tdb.db, id, ctx.clock.now())).toBe(0);
  });

  test("listed in the OpenAPI document as detectCourier, before the slug route", async () => {
    const [res, doc] = await ctx.call("/openapi.json");
    expect(res.status).toBe(200);
    const op = doc.paths["/v1/couriers/detect"]?.get;
    expect(op?.operationId).toBe("detectCourier");
    expect(JSON.stringify(op.parameters)).toContain("tracking_number");
  });
});
