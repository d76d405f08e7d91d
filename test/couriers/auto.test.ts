/**
 * `courier=auto`: check digits (UPS 1Z, UPU S10, FedEx, USPS IMpb), the
 * candidate rules, and /v1/track answering with the detected courier,
 * COURIER_AMBIGUOUS with candidates, or INVALID_TRACKING_NUMBER.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { usedThisMonth } from "../../src/modules/accounts/quota.ts";
import {
  autoCandidates,
  fedexCheckDigitOk,
  resolveCourierParam,
  s10CheckDigitOk,
  upsCheckDigitOk,
} from "../../src/modules/couriers/auto.ts";
import { TrackResponse } from "../../src/modules/tracking/model.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

const slugs = (n: string) => autoCandidates(n).map((c) => c.slug);

describe("check digits", () => {
  test("UPS 1Z: the published example verifies, every other last digit fails", () => {
    expect(upsCheckDigitOk("1Z999AA10123456784")).toBe(true);
    for (const d of "012356789") expect(upsCheckDigitOk(`1Z999AA1012345678${d}`)).toBe(false);
    expect(upsCheckDigitOk("1Z999AA1012345678")).toBe(false);
  });

  test("UPU S10: weights 8 6 4 2 3 5 9 7, 10 → 0 and 11 → 5", () => {
    expect(s10CheckDigitOk("EE123456785IN")).toBe(true);
    expect(s10CheckDigitOk("EE123456780IN")).toBe(false);
    // Sum 0 → 11 − 0 = 11 → check digit 5.
    expect(s10CheckDigitOk("RR000000005IN")).toBe(true);
  });

  test("FedEx: 12-digit mod 11 (weights 1 3 7) and 15-digit mod 10 (weights 3 1)", () => {
    expect(fedexCheckDigitOk("123456789012")).toBe(true);
    expect(fedexCheckDigitOk("123456789013")).toBe(false);
    expect(fedexCheckDigitOk("449044304137821")).toBe(true);
    expect(fedexCheckDigitOk("449044304137822")).toBe(false);
    expect(fedexCheckDigitOk("12345678901")).toBe(false);
  });
});

describe("candidates", () => {
  test.each([
    ["1Z999AA10123456784", ["ups"]],
    ["1z 999 aa1 0123 4567 84", ["ups"]],
    ["EE123456785IN", ["indiapost"]],
    ["SF1234567890", ["shadowfax"]],
    ["TBA1234567890", ["amazonshipping"]],
    ["JJD0123456789012345678", ["dhl"]],
  ])("%p → %p", (n, expected) => {
    expect(slugs(n)).toEqual(expected);
  });

  test("a pinned format whose check digit fails is no match, not a fall-back to a catch-all range", () => {
    expect(slugs("1Z999AA10123456785")).toEqual([]);
    expect(slugs("EE123456780IN")).toEqual([]);
  });

  test("bare digit ranges stay ambiguous; FedEx drops out when its check digit fails", () => {
    const ten = slugs("1234567890");
    expect(ten.length).toBeGreaterThan(1);
    expect(slugs("123456789012")).toContain("fedex");
    expect(slugs("123456789013")).not.toContain("fedex");
    expect(slugs("123456789013").length).toBeGreaterThan(1);
  });

  test("resolveCourierParam: a slug passes through; auto resolves or throws the documented codes", () => {
    expect(resolveCourierParam("delhivery", "x")).toBe("delhivery");
    expect(resolveCourierParam("AUTO", "1Z999AA10123456784")).toBe("ups");
    expect(() => resolveCourierParam("auto", "1234567890")).toThrow(
      expect.objectContaining({ code: "COURIER_AMBIGUOUS" }),
    );
    expect(() => resolveCourierParam("auto", "hello")).toThrow(
      expect.objectContaining({ code: "INVALID_TRACKING_NUMBER" }),
    );
  });
});

describe("GET /v1/track?courier=auto", () => {
  let ctx: TestContext;
  let a: { id: string; key: string };
  beforeAll(async () => {
    ctx = await testContext();
    a = await ctx.account("free");
  });
  afterAll(() => ctx.close());

  test("a UPS 1Z number is tracked with UPS and the answer names it", async () => {
    // Check digit 0: the sandbox's "delivered" scenario.
    const [res, body] = await ctx.call("/v1/track?courier=auto&tracking_number=1Z12345E0205277680", { key: a.key });
    expect(res.status).toBe(200);
    expect(Value.Check(TrackResponse, body)).toBe(true);
    expect(body.detected_courier).toBe("ups");
    expect(body.data.ShipmentState).toBe("delivered");
    expect(body.data.Checkpoints[0].CourierName).toBe("UPS");
    expect(body.usage.used).toBe(1);
    const [, plain] = await ctx.call("/v1/track?courier=ups&tracking_number=1Z12345E0205277680", { key: a.key });
    expect(plain.detected_courier).toBeUndefined();
  });

  test("several candidates → 400 COURIER_AMBIGUOUS with the slugs; none → 400 INVALID_TRACKING_NUMBER; neither counts", async () => {
    const [r1, b1] = await ctx.call("/v1/track?courier=auto&tracking_number=1234567890", { key: a.key });
    expect([r1.status, b1.error.code]).toEqual([400, "COURIER_AMBIGUOUS"]);
    expect(b1.error.candidates).toEqual(slugs("1234567890"));
    const [r2, b2] = await ctx.call("/v1/track?courier=auto&tracking_number=1Z999AA10123456785", { key: a.key });
    expect([r2.status, b2.error.code]).toEqual([400, "INVALID_TRACKING_NUMBER"]);
    expect(await usedThisMonth(ctx.tdb.db, a.id, ctx.clock.now())).toBe(2);
  });
});
