/**
 * The shipment's failed-attempt (NDR) reason in `GET /v1/shipments` (docs/ndr.md, "The shipment's reason"), against
 * the real app, database and sandbox couriers: `reason_code` on each item (null before the first lookup and for a
 * shipment without a failed attempt), kept after the shipment moves on to return to origin, the `?reason_code=`
 * filter (per account, validated against the closed set), and a stored row without it brought up to date by the
 * next lookup.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { eq } from "drizzle-orm";
import { shipments } from "../../src/db/schema/index.ts";
import { ShipmentListResponse } from "../../src/modules/shipments/model.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext();
});
afterAll(() => ctx.close());

// Sandbox delhivery numbers: the last digit picks the scenario, for digit 3 the two before it the failed attempt's
// remark (README.md, "Sandbox couriers").
const UNAVAILABLE = "1234567890203"; // "Consignee not available"
const DAMAGED = "1234567890273"; // "Shipment damaged in transit"
const IN_TRANSIT = "1234567890111";

type Item = { tracking_number: string; status: string; reason_code: string | null };

async function list(key: string, query = ""): Promise<Item[]> {
  const [res, body] = await ctx.call(`/v1/shipments${query}`, { key });
  expect(res.status).toBe(200);
  expect(Value.Check(ShipmentListResponse, body)).toBe(true);
  return body.data.shipments;
}
const reasons = async (key: string) =>
  Object.fromEntries((await list(key)).map((s) => [s.tracking_number, s.reason_code]));
const numbers = async (key: string, query: string) => (await list(key, query)).map((s) => s.tracking_number).sort();
const track = async (key: string, awb: string) => {
  const [res] = await ctx.call(`/v1/track?courier=delhivery&tracking_number=${awb}`, { key });
  expect(res.status).toBe(200);
};

describe("reason_code on GET /v1/shipments", () => {
  test("null until looked up, the failed attempt's reason after, kept through return to origin; the filter finds exactly those", async () => {
    const a = await ctx.account("business");
    const [res] = await ctx.call("/v1/shipments", {
      method: "POST",
      key: a.key,
      body: JSON.stringify({
        shipments: [UNAVAILABLE, DAMAGED, IN_TRANSIT].map((n) => ({ courier: "delhivery", tracking_number: n })),
      }),
    });
    expect(res.status).toBe(202);
    expect(await reasons(a.key)).toEqual({ [UNAVAILABLE]: null, [DAMAGED]: null, [IN_TRANSIT]: null });

    for (const n of [UNAVAILABLE, DAMAGED, IN_TRANSIT]) await track(a.key, n);
    expect(await reasons(a.key)).toEqual({
      [UNAVAILABLE]: "customer_unavailable",
      [DAMAGED]: "damaged",
      [IN_TRANSIT]: null,
    });
    expect((await list(a.key)).find((s) => s.tracking_number === UNAVAILABLE)!.status).toBe("exception");

    // The next scripted step is the return to origin: its checkpoint carries no reason, the shipment keeps the attempt's.
    const [adv, advanced] = await ctx.call(`/v1/sandbox/shipments/delhivery/${UNAVAILABLE}/advance`, {
      key: a.key,
      method: "POST",
    });
    expect(adv.status).toBe(200);
    expect(advanced.data.Checkpoints[0].ReasonCode).toBe("");
    expect((await reasons(a.key))[UNAVAILABLE]).toBe("customer_unavailable");

    expect(await numbers(a.key, "?reason_code=customer_unavailable")).toEqual([UNAVAILABLE]);
    expect(await numbers(a.key, "?reason_code=damaged")).toEqual([DAMAGED]);
    expect(await numbers(a.key, "?reason_code=lost")).toEqual([]);
    expect(await numbers(a.key, "?reason_code=customer_unavailable&courier=dhl")).toEqual([]);

    // Per account: another account sees only its own follows, even of a shipment with a reason.
    const b = await ctx.account("business");
    expect(await numbers(b.key, "?reason_code=customer_unavailable")).toEqual([]);
    await track(b.key, UNAVAILABLE);
    expect(await numbers(b.key, "?reason_code=customer_unavailable")).toEqual([UNAVAILABLE]);
    expect(await numbers(b.key, "?reason_code=damaged")).toEqual([]);
  });

  test("a stored row without its reason (stored before the column existed) gets it at the next lookup", async () => {
    const a = await ctx.account("business");
    const awb = "1234567890213"; // "Consignee refused to accept the shipment"
    await track(a.key, awb);
    expect((await reasons(a.key))[awb]).toBe("customer_refused");
    await ctx.tdb.db.update(shipments).set({ reasonCode: null }).where(eq(shipments.trackingNumber, awb));
    expect(await numbers(a.key, "?reason_code=customer_refused")).toEqual([]);
    // Nothing changed at the courier: the lookup would take the no-change path, which must still write the reason.
    await track(a.key, awb);
    expect(await numbers(a.key, "?reason_code=customer_refused")).toEqual([awb]);
  });

  test("a code outside the closed set is a 422 at query.reason_code", async () => {
    const a = await ctx.account("free");
    for (const bad of ["nonsense", "CUSTOMER_UNAVAILABLE", ""]) {
      const [res, body] = await ctx.call(`/v1/shipments?reason_code=${bad}`, { key: a.key });
      expect(res.status).toBe(422);
      expect(body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([["query", "reason_code"]]);
    }
  });
});
