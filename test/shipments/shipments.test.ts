/**
 * /v1/shipments against the real app and database: bulk follow with per-item
 * results and quota (never beyond it, also under concurrency), the re-check
 * path looking accepted shipments up, the list with filters and cursor, the
 * stored record in the /v1/track shape without quota, and unfollow cutting
 * later events off.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { eq } from "drizzle-orm";
import { deliveries } from "../../src/db/schema/index.ts";
import { setUsage } from "../../src/modules/accounts/service.ts";
import { usedThisMonth } from "../../src/modules/accounts/quota.ts";
import { createRecheckRunner } from "../../src/modules/following/recheck.ts";
import {
  FollowShipmentsResponse,
  ShipmentListResponse,
  StoredShipmentResponse,
} from "../../src/modules/shipments/model.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { liveWebhook, pastInterval, shipmentRow, track } from "../following/helpers.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext({ SANDBOX_STEP_SECONDS: "60" });
});
afterAll(() => ctx.close());

const post = (key: string, shipments: unknown[], headers: Record<string, string> = {}) =>
  ctx.call("/v1/shipments", { method: "POST", key, headers, body: JSON.stringify({ shipments }) });
const recheck = () => createRecheckRunner(ctx.deps, { random: () => 0.5 }).drain();

describe("POST /v1/shipments", () => {
  test("202 with one result per item in order: accepted, invalid with /v1/track's code, auto resolved; quota counts accepted items only", async () => {
    const a = await ctx.account("free");
    const [res, body] = await post(a.key, [
      { courier: "delhivery", tracking_number: "1234-5678-90121" },
      { courier: "delhivery", tracking_number: "12AB" },
      { courier: "delhivry", tracking_number: "1234567890121" },
      { courier: "auto", tracking_number: "1234567890" },
      { courier: "auto", tracking_number: "SF1234567891" },
      { courier: "indiapost", tracking_number: "EE123456781IN" },
      { courier: "delhivery", tracking_number: "1234567890121" },
    ]);
    expect(res.status).toBe(202);
    expect(Value.Check(FollowShipmentsResponse, body)).toBe(true);
    const r = body.data.shipments;
    expect(r.map((x: { result: string }) => x.result)).toEqual([
      "accepted",
      "invalid",
      "invalid",
      "invalid",
      "accepted",
      "invalid",
      "accepted",
    ]);
    expect(r[0]).toEqual({
      courier: "delhivery",
      tracking_number: "1234567890121",
      result: "accepted",
      already_followed: false,
    });
    expect(r[1].error.code).toBe("INVALID_TRACKING_NUMBER");
    expect(r[2].error.code).toBe("COURIER_NOT_FOUND");
    expect(r[3].error.code).toBe("COURIER_AMBIGUOUS");
    expect(r[3].error.candidates).toContain("bluedart");
    expect(r[4]).toMatchObject({ courier: "shadowfax", tracking_number: "SF1234567891", result: "accepted" });
    expect(r[5].error.code).toBe("COURIER_NOT_SUPPORTED");
    // The duplicate of item 0 in the same call is accepted but counted once.
    expect(r[6]).toMatchObject({ result: "accepted", already_followed: true });
    expect(body.data).toMatchObject({ accepted: 3, counted: 2 });
    expect(await usedThisMonth(ctx.tdb.db, a.id, ctx.clock.now())).toBe(2);

    // Following again counts nothing.
    const [, again] = await post(a.key, [{ courier: "delhivery", tracking_number: "1234567890121" }]);
    expect(again.data).toMatchObject({ accepted: 1, counted: 0 });
    expect(again.data.shipments[0].already_followed).toBe(true);
    expect(await usedThisMonth(ctx.tdb.db, a.id, ctx.clock.now())).toBe(2);
  });

  test("quota: items beyond what is left answer quota_exceeded, in request order; never overshoots under concurrent calls", async () => {
    const a = await ctx.account("free");
    await setUsage(ctx.tdb.db, a.id, 97, ctx.clock.now());
    const [, body] = await post(
      a.key,
      ["1000000000011", "1000000000021", "1000000000031", "1000000000041", "1000000000051"].map((n) => ({
        courier: "delhivery",
        tracking_number: n,
      })),
    );
    expect(body.data.shipments.map((x: { result: string }) => x.result)).toEqual([
      "accepted",
      "accepted",
      "accepted",
      "quota_exceeded",
      "quota_exceeded",
    ]);
    expect(body.data.shipments[3].error.code).toBe("QUOTA_EXCEEDED");
    expect(await usedThisMonth(ctx.tdb.db, a.id, ctx.clock.now())).toBe(100);

    const b = await ctx.account("free");
    await setUsage(ctx.tdb.db, b.id, 90, ctx.clock.now());
    const calls = Array.from({ length: 8 }, (_, i) =>
      post(
        b.key,
        [1, 2, 3].map((j) => ({ courier: "delhivery", tracking_number: `20000000${i}${j}001` })),
      ),
    );
    const accepted = (await Promise.all(calls)).reduce((n, [, x]) => n + x.data.accepted, 0);
    expect(accepted).toBe(10);
    expect(await usedThisMonth(ctx.tdb.db, b.id, ctx.clock.now())).toBe(100);
  });

  test("402 ACCOUNT_NEEDS_ATTENTION for the whole call; 422 for an empty or over-long list", async () => {
    const a = await ctx.account("free");
    const { setStatus } = await import("../../src/modules/accounts/service.ts");
    await setStatus(ctx.tdb.db, a.id, "needs_attention");
    const [r1, b1] = await post(a.key, [{ courier: "delhivery", tracking_number: "1234567890121" }]);
    expect([r1.status, b1.error.code]).toEqual([402, "ACCOUNT_NEEDS_ATTENTION"]);
    await setStatus(ctx.tdb.db, a.id, "active");
    expect((await post(a.key, []))[0].status).toBe(422);
    expect(
      (
        await post(
          a.key,
          Array.from({ length: 101 }, () => ({ courier: "delhivery", tracking_number: "1234567890121" })),
        )
      )[0].status,
    ).toBe(422);
  });
});

describe("following through the re-check path", () => {
  test("an accepted shipment is due now, looked up by the re-check, then changes reach the account's live webhook; GET reads the stored record without quota", async () => {
    const a = await ctx.account("growth");
    const wh = await liveWebhook(ctx, a.key);
    const [, body] = await post(a.key, [{ courier: "delhivery", tracking_number: "3000000000011" }]);
    expect(body.data.accepted).toBe(1);
    const before = await shipmentRow(ctx, "delhivery", "3000000000011");
    expect(before!.lastCheckedAt).toBeNull();
    expect(before!.nextCheckAt!.getTime()).toBeLessThanOrEqual(ctx.clock.now());

    // Before the first lookup: pending, no checkpoints, in the /v1/track data shape.
    const [r0, pending] = await ctx.call("/v1/shipments/delhivery/3000000000011", { key: a.key });
    expect(r0.status).toBe(200);
    expect(Value.Check(StoredShipmentResponse, pending)).toBe(true);
    expect(pending.data).toMatchObject({ ShipmentState: "pending", isEmptyTable: true, FetchTime: "0.000" });

    await recheck();
    const after = await shipmentRow(ctx, "delhivery", "3000000000011");
    expect(after!.lastCheckedAt).not.toBeNull();
    expect(after!.state).toBe("in_transit");
    const used = await usedThisMonth(ctx.tdb.db, a.id, ctx.clock.now());
    const [, stored] = await ctx.call("/v1/shipments/delhivery/3000000000011", { key: a.key });
    expect(stored.data.ShipmentState).toBe("intransit");
    expect(stored.data.Checkpoints.length).toBeGreaterThan(0);
    // Same data as /v1/track gives (but no courier call and no quota).
    expect(await usedThisMonth(ctx.tdb.db, a.id, ctx.clock.now())).toBe(used);
    const tracked = await track(ctx, a.key, "delhivery", "3000000000011");
    expect({ ...stored.data, FetchTime: "", ExecutionTime: "" }).toEqual({
      ...tracked.data,
      FetchTime: "",
      ExecutionTime: "",
    });

    // The simulator advances; the next re-check finds a change and fans it out to the webhook.
    ctx.clock.advance(pastInterval(ctx));
    await recheck();
    const shp = (await shipmentRow(ctx, "delhivery", "3000000000011"))!;
    const outbox = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.shipmentId, shp.id));
    expect(outbox.length).toBeGreaterThan(0);
    expect(outbox.every((d) => d.webhookId === wh)).toBe(true);
  });

  test("DELETE stops following: 204, later events do not reach the account, the shipment leaves the schedule, GET answers 404", async () => {
    const a = await ctx.account("growth");
    await liveWebhook(ctx, a.key);
    await track(ctx, a.key, "delhivery", "3000000000021");
    const [del] = await ctx.call("/v1/shipments/delhivery/3000-0000-00021", { method: "DELETE", key: a.key });
    expect(del.status).toBe(204);
    const shp = (await shipmentRow(ctx, "delhivery", "3000000000021"))!;
    expect(shp.followers).toBe(0);
    expect(shp.nextCheckAt).toBeNull();
    const [nf, body] = await ctx.call("/v1/shipments/delhivery/3000000000021", { key: a.key });
    expect([nf.status, body.error.code]).toEqual([404, "SHIPMENT_NOT_FOLLOWED"]);
    expect((await ctx.call("/v1/shipments/delhivery/3000000000021", { method: "DELETE", key: a.key }))[0].status).toBe(
      404,
    );
    // A later change (another account's lookup) is not fanned out to this account.
    ctx.clock.advance(pastInterval(ctx));
    const other = await ctx.account("free");
    await track(ctx, other.key, "delhivery", "3000000000021");
    const outbox = await ctx.tdb.db.select().from(deliveries).where(eq(deliveries.shipmentId, shp.id));
    expect(outbox.filter((d) => d.accountId === a.id)).toEqual([]);
  });

  test("another account's shipment is not readable: 404 SHIPMENT_NOT_FOLLOWED", async () => {
    const a = await ctx.account("free");
    const b = await ctx.account("free");
    await post(a.key, [{ courier: "delhivery", tracking_number: "3000000000031" }]);
    const [res, body] = await ctx.call("/v1/shipments/delhivery/3000000000031", { key: b.key });
    expect([res.status, body.error.code]).toEqual([404, "SHIPMENT_NOT_FOLLOWED"]);
    expect((await ctx.call("/v1/shipments/nosuch/3000000000031", { key: a.key }))[0].status).toBe(404);
  });
});

describe("GET /v1/shipments", () => {
  test("lists the account's shipments newest first in snake_case, with filters and a cursor that neither repeats nor skips", async () => {
    const a = await ctx.account("pro");
    const numbers = Array.from({ length: 7 }, (_, i) => `40000000000${i}1`);
    for (const n of numbers) {
      await post(a.key, [{ courier: "delhivery", tracking_number: n }]);
      ctx.clock.advance(1000);
    }
    await post(a.key, [{ courier: "dhl", tracking_number: "4000000001" }]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const [res, body]: [Response, any] = await ctx.call(
        `/v1/shipments?courier=delhivery&limit=3${cursor ? `&cursor=${cursor}` : ""}`,
        { key: a.key },
      );
      expect(res.status).toBe(200);
      expect(Value.Check(ShipmentListResponse, body)).toBe(true);
      seen.push(...body.data.shipments.map((s: { tracking_number: string }) => s.tracking_number));
      cursor = body.data.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...numbers].reverse());

    const [, all] = await ctx.call("/v1/shipments", { key: a.key });
    expect(all.data.count).toBe(8);
    expect(all.data.shipments[0]).toEqual({
      courier: "dhl",
      tracking_number: "4000000001",
      status: "pending",
      most_recent_status: "Order information received",
      last_checkpoint_at: null,
      estimated_delivery_date: "",
      followed_since: new Date(ctx.clock.now()).toISOString(),
      next_check_at: new Date(ctx.clock.now()).toISOString(),
      reason_code: null,
      reference: null,
      metadata: {},
      stalled: false,
    });
    await recheck();
    const [, transit] = await ctx.call("/v1/shipments?state=in_transit", { key: a.key });
    expect(transit.data.count).toBeGreaterThan(0);
    for (const s of transit.data.shipments) {
      expect(s.status).toBe("in_transit");
      expect(s.last_checkpoint_at).toMatch(/Z$/);
    }
    const [, delivered] = await ctx.call("/v1/shipments?state=delivered", { key: a.key });
    expect(delivered.data.count).toBe(0);
    const [, later] = await ctx.call(`/v1/shipments?updated_since=${new Date(ctx.clock.now() + 1000).toISOString()}`, {
      key: a.key,
    });
    expect(later.data.count).toBe(0);
    // A leap second (RFC 3339 section 5.6) is accepted and reads as 23:59:59.999 of its minute (docs/shipments.md).
    const [one, two] = all.data.shipments as { tracking_number: string }[];
    await ctx.tdb
      .sql`update shipments set updated_at = '2026-06-30T23:59:59.998Z' where tracking_number = ${one!.tracking_number}`;
    await ctx.tdb
      .sql`update shipments set updated_at = '2026-06-30T23:59:59.999Z' where tracking_number = ${two!.tracking_number}`;
    const [leapRes, leap] = await ctx.call("/v1/shipments?updated_since=2026-06-30T23:59:60Z", { key: a.key });
    expect(leapRes.status).toBe(200);
    const sinceLeap = leap.data.shipments.map((s: { tracking_number: string }) => s.tracking_number);
    expect([
      sinceLeap.includes(one!.tracking_number),
      sinceLeap.includes(two!.tracking_number),
      leap.data.count,
    ]).toEqual([false, true, 7]);
    const [bad] = await ctx.call("/v1/shipments?state=lost", { key: a.key });
    expect(bad.status).toBe(422);
    const [, garbage] = await ctx.call("/v1/shipments?cursor=not-a-cursor", { key: a.key });
    expect(garbage.data.count).toBe(0);
  });
});
