/** Schemas of the tracking endpoints; success bodies registered once in {@link trackingModels}. */
import { Type as T } from "@sinclair/typebox";
import { t } from "elysia";
import { schemaModels } from "../../http/models.ts";
import { Text } from "../../http/text.ts";
import { URL_TOKEN_PATTERN } from "../../http/validation.ts";
import { STATES, TRACK_SPELLING } from "../../domain/states.ts";
import { REASON_CODES } from "../../domain/ndr.ts";
import { literalUnion } from "../../lib/literal-union.ts";
import { PredictedDeliverySchema } from "../predictions/model.ts";

export const TrackQuery = t.Object({
  courier: Text({
    minLength: 1,
    maxLength: 64,
    pattern: URL_TOKEN_PATTERN,
    description: "Courier slug from GET /v1/couriers, e.g. `delhivery`; or `auto` to detect it from the number.",
  }),
  tracking_number: Text({
    minLength: 1,
    maxLength: 64,
    pattern: URL_TOKEN_PATTERN,
    description: "The AWB / tracking number. Spaces and hyphens are ignored; letters are upper-cased.",
  }),
});

const TRACK_STATES = STATES.map((s) => TRACK_SPELLING[s]);
const TrackState = literalUnion(TRACK_STATES, {
  description: `Normalised state (tracking spelling): ${TRACK_STATES.join(", ")}.`,
});

const CheckpointSchema = T.Object(
  {
    Activity: T.String({ description: "The courier's description of the event." }),
    CheckpointState: TrackState,
    CourierName: T.String(),
    Date: T.String({ description: "DD-Mon-YYYY, courier local time.", examples: ["05-Nov-2026"] }),
    Time: T.String({ description: "HH:MM, 24-hour, courier local time.", examples: ["14:05"] }),
    Location: T.String(),
    ReasonCode: literalUnion([...REASON_CODES, ""], {
      description:
        "Why a failed delivery attempt or exception happened, normalised across couriers (docs/ndr.md); empty when the checkpoint carries none.",
      examples: ["customer_unavailable"],
    }),
  },
  { title: "Checkpoint" },
);

export const TrackingDataSchema = T.Object(
  {
    MostRecentStatus: T.String({ description: "The service's own short label, e.g. `Out for delivery`." }),
    ShipmentState: TrackState,
    Checkpoints: T.Array(CheckpointSchema, {
      description: "Full history, newest first. Order is not a contract: sort by Date and Time.",
    }),
    CourierHasNoRecordOfShipment: T.Boolean({
      description: "True when the courier no longer knows a shipment stored before; the stored history is returned.",
    }),
    isEmptyTable: T.Boolean({ description: "True when there are no checkpoints yet." }),
    Result: T.String({ examples: ["success"] }),
    AdditionalInfo: T.String({ description: "Courier remark for the newest event, or empty." }),
    FetchTime: T.String({ description: "Seconds spent on courier backends, 3 decimals.", examples: ["0.412"] }),
    PODImageUrl: T.String({ description: "Proof-of-delivery URL, or empty." }),
    ExecutionTime: T.String({ description: "Seconds for the whole request, 3 decimals.", examples: ["0.455"] }),
    EstimatedDeliveryDate: T.String({
      description:
        "The courier's own estimated delivery date (EDD), DD-Mon-YYYY in the courier's local calendar, from its latest answer; empty when that answer has none (Aramex never gives one; UPS drops it once delivered). A changed estimate alone emits none of the spec's events; a move by a day or more emits `tracking.eta_changed` to webhooks that list it.",
      examples: ["06-Nov-2026"],
    }),
    PredictedDelivery: T.Optional(PredictedDeliverySchema),
    Stalled: T.Optional(
      T.Boolean({
        description:
          "Present and true when this unfinished shipment has had no new checkpoint for longer than its courier's and lane's usual longest gap between scans (p95, at least 24 h; 72 h without history). A new checkpoint clears it.",
      }),
    ),
  },
  { title: "TrackingData" },
);

const UsageSchema = T.Object(
  {
    used: T.Integer({ description: "Tracking requests this calendar month (UTC), including this one." }),
    quota: T.Integer(),
    plan: T.String({ description: "Plan id: free, starter, pro, growth, business." }),
    percent: T.Number({ description: "used / quota × 100, 2 decimals." }),
  },
  { title: "Usage" },
);

/** A 200 body of `GET /v1/track` (Delhivery, delivered): the document's example, also the base of the demo and stored-shipment examples. */
export const TRACK_EXAMPLE = {
  success: true,
  data: {
    MostRecentStatus: "Delivered",
    ShipmentState: "delivered",
    Checkpoints: [
      {
        Activity: "Delivered to consignee",
        CheckpointState: "delivered",
        CourierName: "Delhivery",
        Date: "05-Nov-2026",
        Time: "15:41",
        Location: "Delhi, Delhi",
        ReasonCode: "",
      },
      {
        Activity: "Out for delivery",
        CheckpointState: "outfordelivery",
        CourierName: "Delhivery",
        Date: "05-Nov-2026",
        Time: "09:10",
        Location: "Delhi, Delhi",
        ReasonCode: "",
      },
      {
        Activity: "Bag Received at Facility",
        CheckpointState: "intransit",
        CourierName: "Delhivery",
        Date: "04-Nov-2026",
        Time: "21:02",
        Location: "Jalandhar, Punjab",
        ReasonCode: "",
      },
    ],
    CourierHasNoRecordOfShipment: false,
    isEmptyTable: false,
    Result: "success",
    AdditionalInfo: "",
    FetchTime: "0.412",
    PODImageUrl: "https://pod.example/1234567890120.jpg",
    ExecutionTime: "0.455",
    EstimatedDeliveryDate: "06-Nov-2026",
  },
  usage: { used: 42, quota: 100, plan: "free", percent: 42 },
};

/** Beside `data` while the courier's API is degraded or down (docs/courier-health.md): the answer may be stale. */
const CourierWarningSchema = T.Object(
  {
    state: T.Union([T.Literal("degraded"), T.Literal("down")]),
    since: T.String({ format: "date-time" }),
    message: T.String({
      examples: ["Delhivery's tracking API is slow or failing right now; this answer may be out of date."],
    }),
  },
  {
    title: "CourierWarning",
    description:
      "Present only while the courier's API is degraded or down (GET /v1/couriers/{slug}/health): show the customer that the courier is slow right now. Absent otherwise.",
  },
);

export const TrackResponse = T.Object(
  {
    success: T.Literal(true),
    data: TrackingDataSchema,
    usage: UsageSchema,
    detected_courier: T.Optional(
      T.String({ description: "Only with `courier=auto`: the slug the number was tracked with." }),
    ),
    courier_warning: T.Optional(CourierWarningSchema),
  },
  { title: "TrackResponse" },
);
export const DemoTrackResponse = T.Object(
  { success: T.Literal(true), data: TrackingDataSchema },
  { title: "DemoTrackResponse" },
);

/** The success bodies of `GET /v1/track` and `GET /demo/track` as Elysia models (one document component each; routes name them). */
export const trackingModels = schemaModels("tracking.models", { TrackResponse, DemoTrackResponse });
