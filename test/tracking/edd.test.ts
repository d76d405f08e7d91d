/**
 * The estimated delivery date (EDD) end to end against the real app and
 * database: the courier's estimate reaches `EstimatedDeliveryDate` in
 * `/v1/track` and in the stored record, `estimated_delivery_date` in the
 * shipments list and in the webhook payload (as the events API shows it);
 * a changed estimate alone is stored and shown but is no event
 * (docs/shipments.md, "Estimated delivery").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import type { RawCheckpoint, TrackingSnapshot } from "../../src/domain/checkpoint.ts";
import { courierBySlug } from "../../src/modules/couriers/catalogue.ts";
import { EventListResponse } from "../../src/modules/events/model.ts";
import { ShipmentListResponse, StoredShipmentResponse } from "../../src/modules/shipments/model.ts";
import { TrackResponse } from "../../src/modules/tracking/model.ts";
import { applySnapshot } from "../../src/modules/following/normalise.ts";
import { recordFetch } from "../../src/modules/following/store.ts";
import { claimDue, outboxEventSink } from "../../src/modules/webhooks/delivery/outbox.ts";
import { dataFromShipment } from "../../src/modules/webhooks/delivery/payload.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { eventsOf, liveWebhook, shipmentRow, track } from "../following/helpers.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext({ SANDBOX_STEP_SECONDS: "60" });
});
afterAll(() => ctx.close());

const listed = async (key: string, n: string) => {
  const [res, body] = await ctx.call("/v1/shipments?courier=delhivery", { key });
  expect(res.status).toBe(200);
  expect(Value.Check(ShipmentListResponse, body)).toBe(true);
  return body.data.shipments.find((s: { tracking_number: string }) => s.tracking_number === n);
};
const stored = async (key: string, courier: string, n: string) => {
  const [res, body] = await ctx.call(`/v1/shipments/${courier}/${n}`, { key });
  expect(res.status).toBe(200);
  expect(Value.Check(StoredShipmentResponse, body)).toBe(true);
  return body.data;
};

describe("EDD through the API (sandbox couriers)", () => {
  test("Delhivery in transit: the courier's estimate in /v1/track, the stored record and the list, DD-Mon-YYYY on the IST calendar", async () => {
    // First sight 20:00 UTC; the digit-1 delivery is planned four 60 s steps later: 20:04 UTC = 01:34 IST on the 6th.
    ctx.clock.set(Date.UTC(2026, 10, 5, 20, 0));
    const a = await ctx.account("free");
    const body = await track(ctx, a.key, "delhivery", "2222222222121");
    expect(Value.Check(TrackResponse, body)).toBe(true);
    expect(body.data.ShipmentState).toBe("intransit");
    expect(body.data.EstimatedDeliveryDate).toBe("06-Nov-2026");
    expect((await shipmentRow(ctx, "delhivery", "2222222222121"))!.estimatedDelivery).toBe("2026-11-06");
    expect((await stored(a.key, "delhivery", "2222222222121")).EstimatedDeliveryDate).toBe("06-Nov-2026");
    expect((await listed(a.key, "2222222222121")).estimated_delivery_date).toBe("06-Nov-2026");
  });

  test("a courier whose API has no estimate (Aramex), and a manifested shipment: an empty string, never null", async () => {
    const a = await ctx.account("free");
    expect((await track(ctx, a.key, "aramex", "2222222221")).data.EstimatedDeliveryDate).toBe("");
    expect((await track(ctx, a.key, "delhivery", "2222222222127")).data.EstimatedDeliveryDate).toBe("");
    expect((await listed(a.key, "2222222222127")).estimated_delivery_date).toBe("");
  });

  test("UPS once delivered: the estimate gives way to the delivery date (DEL), so the field is empty", async () => {
    const a = await ctx.account("free");
    const body = await track(ctx, a.key, "ups", "1Z12345E0205271680");
    expect(body.data.ShipmentState).toBe("delivered");
    expect(body.data.EstimatedDeliveryDate).toBe("");
  });
});

// ---- a revised estimate, written through the store as a re-check would -----------------------

const cp = (at: string, activity: string): RawCheckpoint => ({
  state: "in_transit",
  subStatus: null,
  activity,
  location: "Mumbai",
  localDate: at.slice(0, 10),
  localTime: at.slice(11, 16),
  at: `${at}:00.000Z`,
  rawCode: "X-ILL1F",
  rawStatus: "In Transit",
  remark: null,
});
const snap = (checkpoints: RawCheckpoint[], estimatedDelivery: string | null): TrackingSnapshot => ({
  checkpoints,
  originCity: "Mumbai",
  destinationCity: "Pune",
  podUrl: null,
  remark: null,
  estimatedDelivery,
});

describe("a changed estimate alone", () => {
  test("normalise: same checkpoints and state, new EDD → the record takes it, no event", () => {
    const first = applySnapshot(undefined, snap([cp("2026-11-03T09:15", "Picked up")], "2026-11-06")).record;
    const { record, event } = applySnapshot(first, snap([cp("2026-11-03T09:15", "Picked up")], "2026-11-08"));
    expect(event).toBeNull();
    expect(record.estimatedDelivery).toBe("2026-11-08");
    // The courier dropping its estimate is shown as none, also without an event.
    const dropped = applySnapshot(record, snap([cp("2026-11-03T09:15", "Picked up")], null));
    expect([dropped.event, dropped.record.estimatedDelivery]).toEqual([null, null]);
  });

  test("store: stored and shown at once; only a tracking.eta_changed row, which a webhook of the spec's five events never gets; the next event's payload carries it (events API and delivery)", async () => {
    const a = await ctx.account("growth");
    await liveWebhook(ctx, a.key);
    const delhivery = courierBySlug("delhivery")!;
    const n = "3333333333121";
    const opts = () => ({
      followAccountId: a.id,
      nowMs: ctx.clock.now(),
      recheckIntervalSeconds: 28_800,
      random: () => 0.5,
      onEvents: outboxEventSink,
    });
    const picked = cp("2026-11-03T09:15", "Picked up");
    await recordFetch(ctx.tdb.db, delhivery, n, snap([picked], "2026-11-06"), opts());
    const id = (await shipmentRow(ctx, "delhivery", n))!.id;
    expect((await listed(a.key, n)).estimated_delivery_date).toBe("06-Nov-2026");

    ctx.clock.advance(60_000);
    const revised = await recordFetch(ctx.tdb.db, delhivery, n, snap([picked], "2026-11-08"), opts());
    expect([revised.event, revised.deliveries]).toEqual([null, 0]);
    expect(await eventsOf(ctx, id)).toEqual(["tracking.eta_changed/in_transit"]);
    expect((await shipmentRow(ctx, "delhivery", n))!.estimatedDelivery).toBe("2026-11-08");
    expect((await listed(a.key, n)).estimated_delivery_date).toBe("08-Nov-2026");
    expect((await stored(a.key, "delhivery", n)).EstimatedDeliveryDate).toBe("08-Nov-2026");

    ctx.clock.advance(60_000);
    const moved = await recordFetch(
      ctx.tdb.db,
      delhivery,
      n,
      snap([picked, cp("2026-11-04T18:40", "Reached hub")], "2026-11-08"),
      opts(),
    );
    expect(moved.event).toBe("tracking.updated");
    expect(await eventsOf(ctx, id)).toEqual(["tracking.eta_changed/in_transit", "tracking.updated/in_transit"]);
    const [res, body] = await ctx.call(`/v1/events?tracking_number=${n}&type=tracking.updated`, { key: a.key });
    expect(res.status).toBe(200);
    expect(Value.Check(EventListResponse, body)).toBe(true);
    expect(body.data.events).toHaveLength(1);
    expect(body.data.events[0].payload.data).toMatchObject({
      tracking_number: n,
      status: "in_transit",
      estimated_delivery_date: "08-Nov-2026",
    });
    // The delivery worker's claim reads the same record: the body it signs carries the estimate too.
    expect(moved.deliveries).toBe(1);
    const claimed = (await claimDue(ctx.tdb.db.$client, ctx.clock.now() + 1_000, 100, 30_000)).filter(
      (d) => d.shipment?.tracking_number === n,
    );
    expect(claimed).toHaveLength(1);
    expect(dataFromShipment(claimed[0]!.shipment!, "2026-11-05T20:02:00Z").estimated_delivery_date).toBe("08-Nov-2026");
  });
});
