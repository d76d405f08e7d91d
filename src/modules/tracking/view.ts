/**
 * The `data` object of `GET /v1/track` and `/demo/track`: the spec's detailed
 * PascalCase shape (spec: Resources, Tracking result; docs/spec-map.md, "Resources" and "Decisions" fix each field).
 */
import type { Static } from "@sinclair/typebox";
import { toSpecDate, toSpecTime } from "../../domain/dates.ts";
import type { Courier } from "../couriers/catalogue.ts";
import type { ShipmentRecord } from "./normalise.ts";
import { TRACK_SPELLING, type ShipmentState } from "../../domain/states.ts";
import type { TrackingDataSchema } from "./model.ts";

/** The `data` object, typed by its one schema (`TrackingDataSchema` in model.ts, which the document and the response check read). */
export type TrackingData = Static<typeof TrackingDataSchema>;

/** Seconds with 3 decimals, as text (`"0.412"`). */
export const seconds = (ms: number) => (Math.max(0, ms) / 1000).toFixed(3);

export function trackingData(courier: Courier, r: ShipmentRecord, t: { fetchMs: number; executionMs: number; noRecord: boolean }): TrackingData {
  return {
    MostRecentStatus: r.mostRecentStatus,
    ShipmentState: TRACK_SPELLING[r.state],
    // Stored newest first (spec sample order; clients sort themselves).
    Checkpoints: r.checkpoints.map((c) => ({
      Activity: c.activity,
      CheckpointState: TRACK_SPELLING[c.state as ShipmentState] ?? "intransit",
      CourierName: courier.name,
      Date: toSpecDate(c.localDate),
      Time: toSpecTime(c.localTime),
      Location: c.location,
    })),
    CourierHasNoRecordOfShipment: t.noRecord,
    isEmptyTable: r.checkpoints.length === 0,
    Result: "success",
    AdditionalInfo: r.additionalInfo ?? "",
    FetchTime: seconds(t.fetchMs),
    PODImageUrl: r.podUrl ?? "",
    ExecutionTime: seconds(t.executionMs),
    // The courier's own estimate, DD-Mon-YYYY like a checkpoint Date, or "" (docs/shipments.md, "Estimated delivery").
    EstimatedDeliveryDate: r.estimatedDelivery ? toSpecDate(r.estimatedDelivery) : "",
  };
}
