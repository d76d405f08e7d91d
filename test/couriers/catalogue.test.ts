import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { COURIERS } from "../../src/modules/couriers/catalogue.ts";
import { CourierListResponse, CourierResponse } from "../../src/modules/couriers/model.ts";
import { suggestSlug } from "../../src/modules/couriers/service.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
let key: string;
beforeAll(async () => {
  ctx = await testContext();
  key = (await ctx.account("growth")).key;
});
afterAll(() => ctx.close());

describe("GET /v1/couriers", () => {
  test("lists the whole catalogue in the declared shape", async () => {
    const [res, body] = await ctx.call("/v1/couriers", { key });
    expect(res.status).toBe(200);
    expect(Value.Check(CourierListResponse, body)).toBe(true);
    expect(body.data.count).toBe(COURIERS.length);
    expect(body.data.count).toBeGreaterThanOrEqual(20);
    expect(body.data.couriers.map((c: { slug: string }) => c.slug)).toContain("delhivery");
    expect(res.headers.get("ratelimit-limit")).toBe("600");
    // The list is answered from a body serialised once (http/prebuilt.ts): it still carries every header.
    expect(res.headers.get("content-type")).toBe("application/json;charset=utf-8");
    expect(res.headers.get("ratelimit-remaining")).toMatch(/^\d+$/);
    expect(res.headers.get("ratelimit-reset")).toMatch(/^\d+$/);
    expect(res.headers.get("strict-transport-security")).toBe("max-age=31536000");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
  });

  test("401 without a key, with an unknown key, with a 10 KB key", async () => {
    for (const k of [undefined, "ctk_" + "a".repeat(43), "x".repeat(10_000)]) {
      const [res, body] = await ctx.call("/v1/couriers", { key: k });
      expect(res.status).toBe(401);
      expect(body).toEqual({ success: false, error: { code: "INVALID_API_KEY", message: expect.any(String) } });
      expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    }
  });
});

describe("GET /v1/couriers/{slug}", () => {
  test("known slug", async () => {
    const [res, body] = await ctx.call("/v1/couriers/bluedart", { key });
    expect(res.status).toBe(200);
    expect(Value.Check(CourierResponse, body)).toBe(true);
    expect(body.data).toEqual({
      slug: "bluedart",
      name: "Blue Dart",
      actions: [],
      available: true,
      sandbox: true,
      rate_budget: null,
      // No evaluation has run on this database yet (docs/courier-health.md).
      health: { state: "unknown", since: null, success_share_15m: null, p95_ms_15m: null },
    });
  });

  test.each([
    ["delhivry", "delhivery"],
    ["blue-dart", "bluedart"],
    ["BlueDart", "bluedart"],
    ["Blue%20Dart", "bluedart"],
    ["fedx", "fedex"],
    ["India%20Post", "indiapost"],
  ])("unknown %p suggests %p", async (slug, hint) => {
    const [res, body] = await ctx.call(`/v1/couriers/${slug}`, { key });
    expect(res.status).toBe(404);
    expect(body.error.code).toBe("COURIER_NOT_FOUND");
    expect(body.error.did_you_mean).toBe(hint);
  });

  test("no suggestion when nothing is clearly meant", async () => {
    const [res, body] = await ctx.call("/v1/couriers/zzzzzzzz", { key });
    expect(res.status).toBe(404);
    expect(body.error.did_you_mean).toBeUndefined();
    expect(suggestSlug("x")).toBeUndefined();
  });
});
