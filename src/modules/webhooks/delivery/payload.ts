/** The delivery payload (spec: Events, "Payload" table), rebuilt from the freshest record on every attempt (Delivery rules 5). */
import { defined } from "../../../lib/defined.ts";
import { Type as T, type Static, type TSchema } from "@sinclair/typebox";
import type { StoredCheckpoint } from "../../../domain/checkpoint.ts";
import { literalUnion } from "../../../lib/literal-union.ts";
import { ddMonYyyy, toSpecTime } from "../../../domain/dates.ts";
import { courierBySlug, COURIERS } from "../../couriers/catalogue.ts";
import { checkpointReason } from "../../couriers/reasons.ts";
import { REASON_CODES } from "../../../domain/ndr.ts";
import {
  mostRecentStatus,
  STATES,
  WEBHOOK_SPELLING,
  type ShipmentState,
  type SubStatus,
  type WebhookSpelling,
} from "../../../domain/states.ts";
import { EVENT_TYPES, isCourierEvent, type EventType, type WebhookEventType } from "../../../domain/events.ts";
import { sampleCourierData, type CourierEventData } from "../../courier-health/event.ts";
import type { PredictedDelivery } from "../../../domain/predictions.ts";
import { EtaChangeSchema, PredictedDeliverySchema } from "../../predictions/model.ts";
import { actionView, SAMPLE_ACTION, ShipmentActionSchema, type ActionRowJson } from "../../actions/model.ts";
export type { CourierEventData } from "../../courier-health/event.ts";

/** Bodies above 256 KiB go with `checkpoints: null` (spec-map Decisions: large payloads). */
export const MAX_PAYLOAD_BYTES = 256 * 1024;
/** "For a test delivery [data.courier] begins with `synthetic-test-`" (spec: Events, Payload table). */
const TEST_COURIER_PREFIX = "synthetic-test-";

const WEBHOOK_STATUSES = [...new Set(STATES.map((s) => WEBHOOK_SPELLING[s]))];
const WebhookStatus = literalUnion(WEBHOOK_STATUSES);
const nullable = <S extends TSchema>(schema: S) => T.Union([schema, T.Null()]);

/** One checkpoint of a delivery's `data.checkpoints` (the document's `WebhookCheckpoint`). */
const WebhookCheckpointSchema = T.Object(
  {
    activity: T.String({ description: "The courier's description of the event." }),
    checkpoint_state: WebhookStatus,
    courier_name: T.String(),
    date: T.String({ description: "DD-Mon-YYYY, courier local time.", examples: ["05-Nov-2026"] }),
    time: T.String({ description: "HH:MM, 24-hour, courier local time.", examples: ["13:22"] }),
    location: T.String(),
    reason_code: literalUnion([...REASON_CODES, ""], {
      description:
        "Why a failed delivery attempt or exception happened, normalised across couriers (docs/ndr.md); empty when none.",
    }),
  },
  { title: "WebhookCheckpoint" },
);

/** `data` of a delivery: the shipment as it is now (spec: Events, "Payload" table). */
const PayloadDataSchema = T.Object({
  tracking_number: T.String(),
  courier: T.String({ description: "Courier slug; for a test delivery it begins with `synthetic-test-`." }),
  reference: nullable(
    T.String({
      description: "The receiving account's own reference for this shipment (POST /v1/shipments, PATCH), or null.",
    }),
  ),
  metadata: T.Record(T.String(), T.String(), {
    description: "The receiving account's own key/value pairs for this shipment; `{}` when none.",
  }),
  public_url: T.Optional(
    nullable(
      T.String({
        format: "uri",
        description:
          "The receiving account's public tracking page for this shipment, to send to the buyer (docs/tracking-page.md); null when the account's public links are off, it no longer follows the shipment, or for a test delivery. Absent from test deliveries stored before this field existed.",
      }),
    ),
  ),
  status: WebhookStatus,
  most_recent_status: T.String({ description: "The service's own short label." }),
  origin_city: nullable(T.String()),
  destination_city: nullable(T.String()),
  delivered_date: nullable(T.String({ description: "DD-Mon-YYYY." })),
  estimated_delivery_date: T.String({
    description:
      "The courier's own estimated delivery date (EDD), DD-Mon-YYYY in its local calendar, as of this delivery; empty when the courier gives none. A changed estimate alone is none of the spec's events: it arrives with the next event (or `tracking.eta_changed`, to webhooks that list it), and GET /v1/shipments shows it at once.",
    examples: ["06-Nov-2026"],
  }),
  stalled: T.Boolean({
    description:
      "True while the shipment is stalled (docs/predictions.md): no new checkpoint for longer than its lane's usual longest gap.",
  }),
  predicted_delivery: T.Optional(PredictedDeliverySchema),
  eta_change: T.Optional(EtaChangeSchema),
  action: T.Optional(ShipmentActionSchema),
  checkpoints: nullable(
    T.Array(WebhookCheckpointSchema, {
      description:
        "The full known history, newest first: replace what you stored. null (payload over 256 KiB): keep the stored checkpoints.",
    }),
  ),
  enqueued_at: T.String({ format: "date-time", description: "Same as the top-level `enqueued_at`." }),
});

/** The body of every delivery (the document's `WebhookPayload`, `payload` of `GET /v1/events`); types read from it. */
export const WebhookPayloadSchema = T.Object(
  {
    event: literalUnion(EVENT_TYPES),
    enqueued_at: T.String({
      format: "date-time",
      description: "ISO 8601 UTC, to the second.",
      examples: ["2026-11-05T13:30:00Z"],
    }),
    sequence: T.Optional(
      T.Integer({
        minimum: 1,
        description:
          "This webhook's number for the event: 1, 2, 3… with no gaps in what was enqueued (same as `X-Webhook-Sequence`). Absent on test fires. Deliveries stay unordered: use it to detect gaps and re-order (docs/webhooks.md).",
      }),
    ),
    data: PayloadDataSchema,
  },
  {
    title: "WebhookPayload",
    description:
      "The exact raw bytes are signed: verify `X-Service-Signature` before parsing. Delivery is at-least-once; `X-Webhook-Event-Id` (and `event` + `data.courier` + `data.tracking_number` + `enqueued_at`) is fixed per event: deduplicate on it. `data` is rebuilt from the freshest record on each retry.",
  },
);

type PayloadCheckpoint = Static<typeof WebhookCheckpointSchema>;
export type PayloadData = Static<typeof PayloadDataSchema>;
type Payload = Static<typeof WebhookPayloadSchema>;

/** The shipment columns the payload needs (as `to_jsonb(shipments)` returns them). */
export interface ShipmentRow {
  tracking_number: string;
  courier: string;
  state: string;
  most_recent_status: string;
  origin_city: string | null;
  destination_city: string | null;
  delivered_at: string | null;
  /** `YYYY-MM-DD` (a `date` column), or null. */
  estimated_delivery: string | null;
  checkpoints: StoredCheckpoint[];
  stalled?: boolean;
  predicted_delivery?: PredictedDelivery | null;
  /** The event's own days, `tracking.eta_changed` only. */
  eta_change?: { previous: string; current: string } | null;
  action?: ActionRowJson | null; // `tracking.action_updated` only: its NDR action
  /** The receiving account's follow data (null when it no longer follows the shipment). */
  reference?: string | null;
  metadata?: Record<string, string> | null;
  /** The follow's link nonce and the account's sealed link key, null while links are off (the claim joins them). */
  public_link?: { nonce: string; key_enc: string | null } | null;
  /** The receiving account's public tracking page (docs/tracking-page.md), computed by the reader; null: none. */
  public_url?: string | null;
}

/** ISO 8601 UTC to the second: `2026-11-05T10:00:00Z` (spec: enqueued_at). */
export function isoSecond(d: Date | number | string): string {
  // toISOString always ends in `.sssZ`; an invalid date throws, as before.
  return `${new Date(d).toISOString().slice(0, -5)}Z`;
}

// Stored states are ShipmentState values (the store writes nothing else).
const spell = (s: string) => (WEBHOOK_SPELLING[s as ShipmentState] ?? s) as WebhookSpelling;

function checkpointsOf(courier: string, stored: readonly StoredCheckpoint[]): PayloadCheckpoint[] {
  const name = courierBySlug(courier)?.name ?? courier;
  return [...stored]
    .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
    .map((c) => ({
      activity: c.activity,
      checkpoint_state: spell(c.state),
      courier_name: name,
      date: ddMonYyyy(c.localDate),
      time: toSpecTime(c.localTime),
      location: c.location,
      reason_code: checkpointReason(courier, c),
    }));
}

/** `data` for a real event from the shipment row now, with the receiving account's `reference` and `metadata`. */
export function dataFromShipment(s: ShipmentRow, enqueuedAt: string): PayloadData {
  return {
    tracking_number: s.tracking_number,
    courier: s.courier,
    reference: s.reference ?? null,
    metadata: s.metadata ?? {},
    public_url: s.public_url ?? null,
    status: spell(s.state),
    most_recent_status: s.most_recent_status,
    origin_city: s.origin_city ?? null,
    destination_city: s.destination_city ?? null,
    delivered_date: s.delivered_at ? ddMonYyyy(s.delivered_at) : null,
    estimated_delivery_date: s.estimated_delivery ? ddMonYyyy(s.estimated_delivery) : "",
    stalled: s.stalled === true,
    ...(s.predicted_delivery ? { predicted_delivery: s.predicted_delivery } : {}),
    ...(s.eta_change ? { eta_change: s.eta_change } : {}),
    ...(s.action ? { action: actionView(s.action) } : {}),
    checkpoints: checkpointsOf(s.courier, s.checkpoints ?? []),
    enqueued_at: enqueuedAt,
  };
}

const enc = new TextEncoder();

/** The exact bytes to sign and send; over 256 KiB, serialised again with `checkpoints: null`. */
export function serialisePayload(
  event: WebhookEventType,
  enqueuedAt: string,
  data: PayloadData | CourierEventData,
  sequence?: number | null,
): Uint8Array {
  const seq = sequence == null ? {} : { sequence };
  if (!("checkpoints" in data)) return enc.encode(JSON.stringify({ event, enqueued_at: enqueuedAt, ...seq, data }));
  return shipmentPayload(event as EventType, enqueuedAt, data, seq);
}

function shipmentPayload(event: EventType, enqueuedAt: string, data: PayloadData, seq: { sequence?: number }) {
  let bytes = enc.encode(JSON.stringify({ event, enqueued_at: enqueuedAt, ...seq, data } satisfies Payload));
  if (bytes.byteLength > MAX_PAYLOAD_BYTES)
    bytes = enc.encode(
      JSON.stringify({
        event,
        enqueued_at: enqueuedAt,
        ...seq,
        data: { ...data, checkpoints: null },
      } satisfies Payload),
    );
  return bytes;
}

const SAMPLE_STATE: Record<Exclude<EventType, "tracking.action_updated">, ShipmentState> = {
  "tracking.updated": "in_transit",
  "tracking.in_transit": "in_transit",
  "tracking.out_for_delivery": "out_for_delivery",
  "tracking.delivered": "delivered",
  "tracking.exception": "exception",
  "tracking.eta_changed": "in_transit",
  "tracking.stalled": "in_transit",
};

/** The synthetic `data` of a test fire of any event a webhook may list: a courier event's for `courier.*`. */
export function sampleDataFor(event: WebhookEventType, enqueuedAt: string): PayloadData | CourierEventData {
  return isCourierEvent(event)
    ? sampleCourierData(event, enqueuedAt, TEST_COURIER_PREFIX)
    : sampleData(event, enqueuedAt);
}

/** The synthetic `data` of a test fire (spec: Events rule 3): `synthetic-test-<slug>`, the example AWB, a short history. */
export function sampleData(event: EventType, enqueuedAt: string, slug = "delhivery"): PayloadData {
  const courier = courierBySlug(slug) ?? defined(COURIERS[0], "a courier in the catalogue");
  const state = event === "tracking.action_updated" ? "exception" : SAMPLE_STATE[event];
  const history: StoredCheckpoint[] = [
    cp("in_transit", "Shipment picked up", "Mumbai", "2026-11-03", "09:15", "picked_up"),
    cp("in_transit", "Reached hub", "Mumbai to Bengaluru", "2026-11-04", "02:40", null),
  ];
  if (state === "out_for_delivery" || state === "delivered")
    history.push(cp("out_for_delivery", "Out for delivery", "Bengaluru", "2026-11-05", "08:05", null));
  if (state === "delivered") history.push(cp("delivered", "Delivered", "Bengaluru", "2026-11-05", "13:22", null));
  if (state === "exception")
    history.push(
      cp("exception", "Consignee not available", "Bengaluru", "2026-11-05", "14:10", "delivery_attempt_failed"),
    );
  return {
    tracking_number: courier.awb.example,
    courier: `${TEST_COURIER_PREFIX}${courier.slug}`,
    reference: null,
    metadata: {},
    public_url: null,
    status: spell(state),
    most_recent_status: mostRecentStatus(state, state === "exception" ? "delivery_attempt_failed" : null),
    origin_city: "Mumbai",
    destination_city: "Bengaluru",
    delivered_date: state === "delivered" ? "05-Nov-2026" : null,
    estimated_delivery_date: state === "exception" ? "06-Nov-2026" : "05-Nov-2026",
    stalled: event === "tracking.stalled",
    ...(event === "tracking.eta_changed" ? { eta_change: { previous: "2026-11-04", current: "2026-11-05" } } : {}),
    ...(event === "tracking.action_updated" ? { action: SAMPLE_ACTION } : {}),
    checkpoints: checkpointsOf(courier.slug, history),
    enqueued_at: enqueuedAt,
  };
}

function cp(
  state: ShipmentState,
  activity: string,
  location: string,
  localDate: string,
  localTime: string,
  subStatus: SubStatus | null,
): StoredCheckpoint {
  return {
    state,
    subStatus,
    activity,
    location,
    localDate,
    localTime,
    at: `${localDate}T${localTime}:00Z`,
    rawCode: null,
    rawStatus: null,
    remark: null,
  };
}
