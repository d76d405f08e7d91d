/**
 * Schemas of `/v1/shipments` (docs/shipments.md): request bodies and queries in `t`, responses in TypeBox; the
 * request and success bodies are registered once in {@link shipmentModels}.
 */
import { Type as T } from "@sinclair/typebox";
import { t } from "elysia";
import { schemaModels } from "../../http/models.ts";
import { Text } from "../../http/text.ts";
import { URL_TOKEN_PATTERN } from "../../http/validation.ts";
import { TrackingDataSchema } from "../tracking/model.ts";

/** Shipments per `POST /v1/shipments` call. */
export const MAX_SHIPMENTS_PER_CALL = 100;

const CourierParam = Text({ minLength: 1, maxLength: 64, pattern: URL_TOKEN_PATTERN, description: "Courier slug from GET /v1/couriers, or `auto` to detect it from the number." });
const NumberParam = Text({ minLength: 1, maxLength: 64, pattern: URL_TOKEN_PATTERN, description: "The AWB / tracking number. Spaces and hyphens are ignored; letters are upper-cased." });

export const FollowShipmentsBody = t.Object(
  {
    shipments: t.Array(t.Object({ courier: CourierParam, tracking_number: NumberParam }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: MAX_SHIPMENTS_PER_CALL,
      description: `1 to ${MAX_SHIPMENTS_PER_CALL} shipments to follow.`,
    }),
  },
  { additionalProperties: false },
);
export type FollowShipmentsInput = typeof FollowShipmentsBody.static;

const STATE_NAMES = ["pending", "in_transit", "out_for_delivery", "delivered", "exception", "returned", "cancelled"] as const;

export const ListShipmentsQuery = t.Object({
  // Literals, not t.UnionEnum: Elysia gives a UnionEnum a default (its first value), which would filter every request.
  state: t.Optional(t.Union(STATE_NAMES.map((s) => t.Literal(s)) as [ReturnType<typeof t.Literal<(typeof STATE_NAMES)[number]>>], { description: "Only shipments in this state (webhook spelling)." })),
  courier: t.Optional(Text({ minLength: 1, maxLength: 64, pattern: URL_TOKEN_PATTERN, description: "Only this courier's shipments (slug)." })),
  updated_since: t.Optional(Text({ format: "date-time", description: "Only shipments whose record changed at or after this instant (ISO 8601)." })),
  limit: t.Optional(T.Integer({ minimum: 1, maximum: 100, default: 20, description: "Shipments per page: an integer, 1 to 100 (default 20)." })),
  cursor: t.Optional(Text({ maxLength: 200, pattern: URL_TOKEN_PATTERN, description: "`next_cursor` of the previous page." })),
});
export type ListShipmentsInput = typeof ListShipmentsQuery.static;

export const ShipmentParams = t.Object({
  courier: Text({ minLength: 1, maxLength: 64, pattern: URL_TOKEN_PATTERN, description: "Courier slug." }),
  tracking_number: Text({ minLength: 1, maxLength: 64, pattern: URL_TOKEN_PATTERN, description: "The tracking number (normalised like /v1/track)." }),
});

// ---- responses -------------------------------------------------------------------------

const ItemResult = T.Object(
  {
    courier: T.String({ description: "The slug tracked (the detected one for `auto`), or the courier as sent when invalid." }),
    tracking_number: T.String({ description: "Normalised when the courier is known, else as sent." }),
    result: T.Union([T.Literal("accepted"), T.Literal("invalid"), T.Literal("quota_exceeded")]),
    already_followed: T.Optional(T.Boolean({ description: "On `accepted`: the account already followed it (not counted again)." })),
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

export const ShipmentSummarySchema = T.Object(
  {
    courier: T.String(),
    tracking_number: T.String(),
    status: T.String({ description: "Webhook spelling: pending, in_transit, out_for_delivery, delivered, exception, returned, cancelled." }),
    most_recent_status: T.String(),
    last_checkpoint_at: T.Union([T.String({ format: "date-time" }), T.Null()], { description: "UTC instant of the newest checkpoint, or null." }),
    estimated_delivery_date: T.String({ description: "DD-Mon-YYYY from the courier's own estimate (its latest answer), or empty when it gives none.", examples: ["06-Nov-2026"] }),
    followed_since: T.String({ format: "date-time" }),
    next_check_at: T.Union([T.String({ format: "date-time" }), T.Null()], { description: "Next scheduled re-check; null when no longer re-checked (terminal)." }),
  },
  { title: "ShipmentSummary" },
);

export const ShipmentListResponse = T.Object(
  {
    success: T.Literal(true),
    data: T.Object({ shipments: T.Array(ShipmentSummarySchema), count: T.Integer(), next_cursor: T.Union([T.String(), T.Null()]) }),
  },
  { title: "ShipmentList" },
);

export const StoredShipmentResponse = T.Object({ success: T.Literal(true), data: TrackingDataSchema }, { title: "StoredShipmentResponse" });

/** The `/v1/shipments` request and success bodies as Elysia models (one document component each; routes name them). */
export const shipmentModels = schemaModels("shipments.models", {
  ShipmentsFollow: FollowShipmentsBody,
  FollowShipmentsResult: FollowShipmentsResponse,
  ShipmentList: ShipmentListResponse,
  StoredShipmentResponse,
});
