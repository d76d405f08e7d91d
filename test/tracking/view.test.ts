/**
 * The `data` object of a tracking answer (spec: Resources, Tracking result): checkpoints in the spec's
 * spelling, built once per stored checkpoint list and never shared across couriers.
 */
import { describe, expect, test } from "bun:test";
import type { StoredCheckpoint } from "../../src/domain/checkpoint.ts";
import { COURIERS } from "../../src/modules/couriers/catalogue.ts";
import type { ShipmentRecord } from "../../src/modules/following/normalise.ts";
import { trackAnswerJson, trackingData } from "../../src/modules/tracking/view.ts";

const checkpoint = (over: Partial<StoredCheckpoint> = {}): StoredCheckpoint => ({
  state: "delivered",
  subStatus: null,
  activity: "Delivered to consignee",
  location: "Mumbai",
  localDate: "2026-11-05",
  localTime: "14:32:10",
  at: "2026-11-05T09:02:10.000Z",
  rawCode: "DL",
  rawStatus: "Delivered",
  remark: null,
  ...over,
});

const record = (checkpoints: StoredCheckpoint[]): ShipmentRecord => ({
  state: "delivered",
  subStatus: null,
  mostRecentStatus: "Delivered to consignee",
  checkpoints,
  originCity: null,
  destinationCity: null,
  deliveredAt: "2026-11-05",
  podUrl: null,
  additionalInfo: null,
  estimatedDelivery: null,
});

const delhivery = COURIERS.find((c) => c.slug === "delhivery")!;
const bluedart = COURIERS.find((c) => c.slug === "bluedart")!;
const timing = { fetchMs: 0, executionMs: 1.5, noRecord: false };

describe("tracking data", () => {
  test("checkpoints in the spec's spelling: DD-Mon-YYYY, HH:MM, the courier's name, the state's track spelling", () => {
    const data = trackingData(
      delhivery,
      record([
        checkpoint(),
        checkpoint({
          state: "out_for_delivery",
          activity: "Out for delivery",
          localDate: "2026-11-04",
          localTime: "08:05",
        }),
      ]),
      timing,
    );
    expect(data.Checkpoints).toEqual([
      {
        Activity: "Delivered to consignee",
        CheckpointState: "delivered",
        CourierName: "Delhivery",
        Date: "05-Nov-2026",
        Time: "14:32",
        Location: "Mumbai",
        ReasonCode: "",
      },
      {
        Activity: "Out for delivery",
        CheckpointState: "outfordelivery",
        CourierName: "Delhivery",
        Date: "04-Nov-2026",
        Time: "08:05",
        Location: "Mumbai",
        ReasonCode: "",
      },
    ]);
    expect(data.ExecutionTime).toBe("0.002");
    expect(data.isEmptyTable).toBe(false);
  });

  test("one record answered again: the same checkpoint view, built once; another courier or another list gets its own", () => {
    const r = record([checkpoint()]);
    const first = trackingData(delhivery, r, timing);
    const again = trackingData(delhivery, r, { ...timing, executionMs: 7 });
    expect(again.Checkpoints).toBe(first.Checkpoints);
    expect(again.ExecutionTime).toBe("0.007");
    expect(Object.isFrozen(first.Checkpoints[0])).toBe(true);

    const other = trackingData(bluedart, r, timing);
    expect(other.Checkpoints[0]!.CourierName).toBe("Blue Dart");
    expect(trackingData(delhivery, r, timing).Checkpoints[0]!.CourierName).toBe("Delhivery");

    const newer = trackingData(
      delhivery,
      record([checkpoint({ activity: "Delivered; signed by the consignee" })]),
      timing,
    );
    expect(newer.Checkpoints[0]!.Activity).toBe("Delivered; signed by the consignee");
  });
});

describe("the answer's JSON", () => {
  test("is JSON.stringify's text, whatever the courier's strings hold, and reuses the checkpoints' serialisation", () => {
    const tricky = 'Held "Checkpoints":[] $& $1 \u2028 \\ "quoted"';
    const r = {
      ...record([checkpoint({ activity: tricky }), checkpoint({ location: "$`$'" })]),
      mostRecentStatus: tricky,
    };
    const usage = { used: 3, limit: 100, remaining: 97, plan: "growth" };
    for (const detected of [undefined, "delhivery"]) {
      const answer = {
        success: true as const,
        data: trackingData(delhivery, r, timing),
        usage,
        ...(detected ? { detected_courier: detected } : {}),
      };
      expect(trackAnswerJson(answer)).toBe(JSON.stringify(answer));
      expect(trackAnswerJson(answer)).toBe(JSON.stringify(answer));
    }
    const empty = { success: true as const, data: trackingData(delhivery, record([]), timing), usage };
    expect(trackAnswerJson(empty)).toBe(JSON.stringify(empty));
  });
});
