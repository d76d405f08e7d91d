/** The `data` object of `GET /v1/track` and `/demo/track` (spec: Resources, Tracking result; docs/spec-map.md). */
import type { Static } from "@sinclair/typebox";
import { toSpecDate, toSpecTime } from "../../domain/dates.ts";
import type { Courier } from "../couriers/catalogue.ts";
import { checkpointReason } from "../couriers/reasons.ts";
import type { ShipmentRecord } from "../following/normalise.ts";
import { TRACK_SPELLING, type ShipmentState } from "../../domain/states.ts";
import type { TrackingDataSchema } from "./model.ts";
import type { PredictedDelivery } from "../../domain/predictions.ts";

/** The `data` object, typed by its one schema (`TrackingDataSchema` in model.ts, which the document and the response check read). */
export type TrackingData = Static<typeof TrackingDataSchema>;

/** Seconds with 3 decimals, as text (`"0.412"`). */
const seconds = (ms: number) => (Math.max(0, ms) / 1000).toFixed(3);

type CheckpointView = TrackingData["Checkpoints"][number];

/** The spec's checkpoint objects, built once per stored array (reused records hand over the same array). */
const viewed = new WeakMap<ShipmentRecord["checkpoints"], { courierName: string; view: readonly CheckpointView[] }>();

function checkpointsView(courier: Courier, checkpoints: ShipmentRecord["checkpoints"]): readonly CheckpointView[] {
  const hit = viewed.get(checkpoints);
  if (hit !== undefined && hit.courierName === courier.name) return hit.view;
  // Stored newest first (spec sample order; clients sort themselves).
  const view = Object.freeze(
    checkpoints.map((c) =>
      Object.freeze({
        Activity: c.activity,
        CheckpointState: TRACK_SPELLING[c.state as ShipmentState] ?? "intransit",
        CourierName: courier.name,
        Date: toSpecDate(c.localDate),
        Time: toSpecTime(c.localTime),
        Location: c.location,
        ReasonCode: checkpointReason(courier.slug, c),
      }),
    ),
  );
  viewed.set(checkpoints, { courierName: courier.name, view });
  return view;
}

/** What our own history adds to the courier's data (docs/predictions.md): both absent when there is nothing to say. */
export interface HistoryView {
  predicted?: PredictedDelivery;
  stalled?: boolean;
}

export function trackingData(
  courier: Courier,
  r: ShipmentRecord,
  t: { fetchMs: number; executionMs: number; noRecord: boolean },
  h: HistoryView = {},
): TrackingData {
  const data: TrackingData = {
    MostRecentStatus: r.mostRecentStatus,
    ShipmentState: TRACK_SPELLING[r.state],
    Checkpoints: checkpointsView(courier, r.checkpoints) as CheckpointView[],
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
  if (h.predicted) data.PredictedDelivery = h.predicted;
  if (h.stalled) data.Stalled = true;
  return data;
}

/** What `GET /v1/track` answers with 200 (the `TrackResponse` schema in model.ts). */
export interface TrackAnswer {
  success: true;
  data: TrackingData;
  usage: unknown;
  detected_courier?: string;
  courier_warning?: { state: "degraded" | "down"; since: string; message: string };
}

const CHECKPOINTS_KEY = '"Checkpoints":[]';
/** Checkpoints as JSON, once per view array: a record answered again hands over the same frozen array. */
const checkpointsJson = new WeakMap<readonly CheckpointView[], string>();

/**
 * `answer` as JSON, the same text `JSON.stringify(answer)` gives, with the checkpoints (most of the body)
 * serialised once per stored record. The first `"Checkpoints":[]` of the outer text is the key itself: inside a
 * JSON string a quote is always escaped.
 */
export function trackAnswerJson(answer: TrackAnswer): string {
  const checkpoints = answer.data.Checkpoints;
  let json = checkpointsJson.get(checkpoints);
  if (json === undefined) {
    json = JSON.stringify(checkpoints);
    checkpointsJson.set(checkpoints, json);
  }
  const outer = JSON.stringify({ ...answer, data: { ...answer.data, Checkpoints: [] } });
  return outer.replace(CHECKPOINTS_KEY, () => `"Checkpoints":${json}`);
}
