/** Schemas of `/v1/shipments` (docs/shipments.md); bodies registered once in {@link shipmentModels}. */
import { Type as T, type TLiteral, type TNull } from "@sinclair/typebox";
import { t } from "elysia";
import { schemaModels } from "../../http/models.ts";
import { Text } from "../../http/text.ts";
import { PincodeField } from "../estimates/model.ts";
import { URL_TOKEN_PATTERN } from "../../http/validation.ts";
import { REASON_CODES, type ReasonCode } from "../../domain/ndr.ts";
import { STATES, WEBHOOK_SPELLING } from "../../domain/states.ts";
import { literalUnion } from "../../lib/literal-union.ts";
import {
  MAX_METADATA_KEYS,
  MAX_METADATA_VALUE_CHARS,
  MAX_REFERENCE_CHARS,
  METADATA_KEY_PATTERN,
} from "../../domain/follow-data.ts";
import { TrackingDataSchema } from "../tracking/model.ts";
import { PredictedDeliverySchema } from "../predictions/model.ts";
import { PublicLinkResponse, PublicUrl } from "./public-url.ts";
import { ShipmentActionsField } from "../actions/model.ts";

/** Shipments per `POST /v1/shipments` call. */
export const MAX_SHIPMENTS_PER_CALL = 100;

const CourierParam = Text({
  minLength: 1,
  maxLength: 64,
  pattern: URL_TOKEN_PATTERN,
  description: "Courier slug from GET /v1/couriers, or `auto` to detect it from the number.",
});
const NumberParam = Text({
  minLength: 1,
  maxLength: 64,
  pattern: URL_TOKEN_PATTERN,
  description: "The AWB / tracking number. Spaces and hyphens are ignored; letters are upper-cased.",
});

/** A reference: no control characters (it is shown in the dashboard and filtered on in a query string). */
const REFERENCE_PATTERN = "^[^\\u0000-\\u001F\\u007F]*$";
const Reference = (description: string) =>
  Text({ minLength: 1, maxLength: MAX_REFERENCE_CHARS, pattern: REFERENCE_PATTERN, description });
// No U+0000 in a value: PostgreSQL's jsonb cannot store it.
const MetadataValue = Text({
  maxLength: MAX_METADATA_VALUE_CHARS,
  pattern: "^[^\\u0000]*$",
  description: `Up to ${MAX_METADATA_VALUE_CHARS} characters.`,
});
const metadataOf = <V extends Parameters<typeof t.Record>[1]>(value: V, description: string) =>
  t.Record(t.String({ pattern: METADATA_KEY_PATTERN }), value, {
    maxProperties: MAX_METADATA_KEYS,
    additionalProperties: false,
    description,
  });
const METADATA_RULES = `at most ${MAX_METADATA_KEYS} keys; a key is 1 to 40 of \`A-Z a-z 0-9 _ . -\`; a value is a string of up to ${MAX_METADATA_VALUE_CHARS} characters`;

const FollowItem = t.Object(
  {
    courier: CourierParam,
    tracking_number: NumberParam,
    reference: t.Optional(
      Reference(
        `Your own reference for this shipment (e.g. your order id), 1 to ${MAX_REFERENCE_CHARS} characters. Returned in the list (filter with \`reference\`), the stored read, events and every webhook payload.`,
      ),
    ),
    metadata: t.Optional(
      metadataOf(
        MetadataValue,
        `Your own key/value pairs for this shipment: ${METADATA_RULES}. Returned wherever \`reference\` is.`,
      ),
    ),
    origin_pincode: PincodeField("origin"),
    destination_pincode: PincodeField("destination"),
  },
  { additionalProperties: false },
);

export const FollowShipmentsBody = t.Object(
  {
    shipments: t.Array(FollowItem, {
      minItems: 1,
      maxItems: MAX_SHIPMENTS_PER_CALL,
      description: `1 to ${MAX_SHIPMENTS_PER_CALL} shipments to follow.`,
    }),
  },
  { additionalProperties: false },
);
export type FollowShipmentsInput = typeof FollowShipmentsBody.static;

const UpdateShipmentBody = t.Object(
  {
    reference: t.Optional(
      t.Union([Reference(`The new reference, 1 to ${MAX_REFERENCE_CHARS} characters.`), t.Null()], {
        description: "A string sets the reference; null clears it; absent leaves it.",
      }),
    ),
    metadata: t.Optional(
      metadataOf(
        t.Union([MetadataValue, t.Null()]),
        `Keys to change: a string sets the key, null removes it, a key not sent stays as it was. The result holds ${METADATA_RULES}.`,
      ),
    ),
    origin_pincode: PincodeField("origin"),
    destination_pincode: PincodeField("destination"),
  },
  { additionalProperties: false },
);
export type UpdateShipmentInput = typeof UpdateShipmentBody.static;

export const ListShipmentsQuery = t.Object({
  // Literals, not t.UnionEnum: Elysia gives a UnionEnum a default (its first value), which would filter every request.
  state: t.Optional(
    literalUnion(
      STATES.map((s) => WEBHOOK_SPELLING[s]),
      { description: "Only shipments in this state (webhook spelling)." },
    ),
  ),
  courier: t.Optional(
    Text({
      minLength: 1,
      maxLength: 64,
      pattern: URL_TOKEN_PATTERN,
      description: "Only this courier's shipments (slug).",
    }),
  ),
  updated_since: t.Optional(
    Text({
      format: "date-time",
      description: "Only shipments whose record changed at or after this instant (ISO 8601).",
    }),
  ),
  limit: t.Optional(
    T.Integer({
      minimum: 1,
      maximum: 100,
      default: 20,
      description: "Shipments per page: an integer, 1 to 100 (default 20).",
    }),
  ),
  cursor: t.Optional(
    Text({ maxLength: 200, pattern: URL_TOKEN_PATTERN, description: "`next_cursor` of the previous page." }),
  ),
  reference: t.Optional(Reference("Only the shipment(s) followed with exactly this reference (case-sensitive).")),
  reason_code: t.Optional(
    literalUnion(REASON_CODES, {
      description:
        "Only shipments whose latest failed-attempt (NDR) or exception reason is this code (see `reason_code` on each item).",
    }),
  ),
  stalled: t.Optional(
    t.Union([t.Literal("true"), t.Literal("false")], {
      description: "`true`: only stalled shipments (see `stalled` on each item); `false`: only those that are not.",
    }),
  ),
});
export type ListShipmentsInput = typeof ListShipmentsQuery.static;

export const ShipmentParams = t.Object({
  courier: Text({ minLength: 1, maxLength: 64, pattern: URL_TOKEN_PATTERN, description: "Courier slug." }),
  tracking_number: Text({
    minLength: 1,
    maxLength: 64,
    pattern: URL_TOKEN_PATTERN,
    description: "The tracking number (normalised like /v1/track).",
  }),
});

/** The follow's own data in answers: `reference` (null when none) and `metadata` (`{}` when none). */
const followDataFields = {
  reference: T.Union([T.String(), T.Null()], { description: "Your reference for this shipment, or null." }),
  metadata: T.Record(T.String(), T.String(), {
    description: "Your key/value pairs for this shipment; `{}` when none.",
  }),
};

const ItemResult = T.Object(
  {
    courier: T.String({
      description: "The slug tracked (the detected one for `auto`), or the courier as sent when invalid.",
    }),
    tracking_number: T.String({ description: "Normalised when the courier is known, else as sent." }),
    result: T.Union([T.Literal("accepted"), T.Literal("invalid"), T.Literal("quota_exceeded")]),
    already_followed: T.Optional(
      T.Boolean({ description: "On `accepted`: the account already followed it (not counted again)." }),
    ),
    public_url: T.Optional(PublicUrl),
    error: T.Optional(
      T.Object({
        code: T.String({ description: "The code GET /v1/track would answer for this item." }),
        message: T.String(),
        candidates: T.Optional(T.Array(T.String())),
      }),
    ),
  },
  { title: "ShipmentFollowResult" },
);

export const FollowShipmentsResponse = T.Object(
  {
    success: T.Literal(true),
    data: T.Object({
      shipments: T.Array(ItemResult, { description: "One result per item, in request order." }),
      accepted: T.Integer({ description: "Items accepted." }),
      counted: T.Integer({ description: "Tracking requests counted against this month's quota by this call." }),
    }),
  },
  { title: "FollowShipmentsResult" },
);

const ShipmentSummarySchema = T.Object(
  {
    courier: T.String(),
    tracking_number: T.String(),
    status: T.String({
      description:
        "Webhook spelling: pending, in_transit, out_for_delivery, delivered, exception, returned, cancelled.",
    }),
    most_recent_status: T.String(),
    last_checkpoint_at: T.Union([T.String({ format: "date-time" }), T.Null()], {
      description: "UTC instant of the newest checkpoint, or null.",
    }),
    estimated_delivery_date: T.String({
      description: "DD-Mon-YYYY from the courier's own estimate (its latest answer), or empty when it gives none.",
      examples: ["06-Nov-2026"],
    }),
    followed_since: T.String({ format: "date-time" }),
    next_check_at: T.Union([T.String({ format: "date-time" }), T.Null()], {
      description: "Next scheduled re-check; null when no longer re-checked (terminal).",
    }),
    reason_code: T.Union([...REASON_CODES.map((r) => T.Literal(r)), T.Null()] as [TLiteral<ReasonCode>, TNull], {
      description:
        "The normalised reason of the newest failed delivery attempt or exception among the checkpoints (the `ReasonCode` of that checkpoint), kept after the shipment moves on (e.g. to return to origin); null when no checkpoint carries one.",
    }),
    stalled: T.Boolean({
      description:
        "True when this unfinished shipment has had no new checkpoint for longer than its courier's and lane's usual longest gap between scans (p95, at least 24 h; 72 h without history; docs/predictions.md).",
    }),
    predicted_delivery: T.Optional(PredictedDeliverySchema),
    ...followDataFields,
    public_url: PublicUrl,
  },
  { title: "ShipmentSummary" },
);

export const ShipmentListResponse = T.Object(
  {
    success: T.Literal(true),
    data: T.Object({
      shipments: T.Array(ShipmentSummarySchema),
      count: T.Integer(),
      next_cursor: T.Union([T.String(), T.Null()]),
    }),
  },
  { title: "ShipmentList" },
);

export const StoredShipmentResponse = T.Object(
  {
    success: T.Literal(true),
    data: TrackingDataSchema,
    follow: T.Object(
      { ...followDataFields, public_url: PublicUrl },
      {
        description:
          "This account's own data on the shipment, beside the tracking data (which is exactly GET /v1/track's).",
      },
    ),
    actions: ShipmentActionsField,
  },
  { title: "StoredShipmentResponse" },
);

export const UpdateShipmentResponse = T.Object(
  {
    success: T.Literal(true),
    data: T.Object(
      { courier: T.String(), tracking_number: T.String(), ...followDataFields },
      { description: "The follow as it is now." },
    ),
  },
  { title: "UpdateShipmentResult" },
);

/** The `/v1/shipments` request and success bodies as Elysia models (one document component each; routes name them). */
export const shipmentModels = schemaModels("shipments.models", {
  ShipmentsFollow: FollowShipmentsBody,
  FollowShipmentsResult: FollowShipmentsResponse,
  ShipmentList: ShipmentListResponse,
  StoredShipmentResponse,
  ShipmentUpdate: UpdateShipmentBody,
  UpdateShipmentResult: UpdateShipmentResponse,
  PublicLinkResult: PublicLinkResponse,
});
