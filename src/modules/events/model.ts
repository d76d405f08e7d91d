/** Schemas of `/v1/events` and the replay routes (docs/events.md); bodies registered once in {@link eventModels}. */
import { Type as T } from "@sinclair/typebox";
import { t } from "elysia";
import { schemaModels } from "../../http/models.ts";
import { Text } from "../../http/text.ts";
import { URL_TOKEN_PATTERN } from "../../http/validation.ts";
import { EVENT_TYPES } from "../../domain/events.ts";
import { literalUnion } from "../../lib/literal-union.ts";
import { WebhookPayloadSchema } from "../webhooks/delivery/payload.ts";

export const EventsQuery = t.Object({
  // Literals, not t.UnionEnum: Elysia gives a UnionEnum a default (its first value), which would filter every request.
  type: t.Optional(
    t.Union(EVENT_TYPES.map((e) => t.Literal(e)) as [ReturnType<typeof t.Literal<(typeof EVENT_TYPES)[number]>>], {
      description: "Only events of this type.",
    }),
  ),
  courier: t.Optional(
    Text({
      minLength: 1,
      maxLength: 64,
      pattern: URL_TOKEN_PATTERN,
      description: "Only this courier's events (slug).",
    }),
  ),
  tracking_number: t.Optional(
    Text({
      minLength: 1,
      maxLength: 64,
      pattern: URL_TOKEN_PATTERN,
      description: "Only this shipment's events (normalised like /v1/track).",
    }),
  ),
  since: t.Optional(
    Text({
      format: "date-time",
      description: "Only events at or after this instant (ISO 8601); at most 30 days back.",
    }),
  ),
  limit: t.Optional(
    T.Integer({
      minimum: 1,
      maximum: 100,
      default: 20,
      description: "Events per page: an integer, 1 to 100 (default 20).",
    }),
  ),
  cursor: t.Optional(
    Text({ maxLength: 100, pattern: URL_TOKEN_PATTERN, description: "`next_cursor` of the previous page." }),
  ),
});

export const RedeliverParams = t.Object({
  webhook_id: Text({ minLength: 1, maxLength: 100, pattern: URL_TOKEN_PATTERN, description: "Webhook id (`wh_…`)." }),
  delivery_id: Text({
    minLength: 1,
    maxLength: 100,
    pattern: URL_TOKEN_PATTERN,
    description: "Delivery id (`dlv_…`) from the webhook's deliveries.",
  }),
});

const RecoverBody = t.Object(
  {
    since: Text({
      format: "date-time",
      description:
        "ISO 8601 instant, at most 30 days ago: deliveries that ended abandoned or dropped at or after it are queued again.",
    }),
  },
  { additionalProperties: false },
);

const EventName = literalUnion(EVENT_TYPES);
const EventSchema = T.Object(
  {
    id: T.String({
      description: "Stable event id; deliveries carry it in X-Webhook-Event-Id and webhook-id.",
      examples: ["evt_01937c2a9e4b7d1f8c6a5b4e3d2c1b0a"],
    }),
    type: EventName,
    created_at: T.String({
      format: "date-time",
      description: "When the change was detected (the payload's enqueued_at).",
    }),
    courier: T.String(),
    tracking_number: T.String(),
    payload: WebhookPayloadSchema,
  },
  { title: "Event" },
);

export const EventListResponse = T.Object(
  {
    success: T.Literal(true),
    data: T.Object({ events: T.Array(EventSchema), count: T.Integer(), next_cursor: T.Union([T.String(), T.Null()]) }),
  },
  { title: "EventList" },
);

const RedeliveryResponse = T.Object(
  {
    success: T.Literal(true),
    data: T.Object({
      delivery_id: T.String({
        description: "The new delivery (`dlv_…`); its attempts appear in the webhook's deliveries.",
      }),
      enqueued_at: T.String({ format: "date-time", description: "The event's own enqueued_at (unchanged)." }),
    }),
  },
  { title: "Redelivery" },
);

const RecoverResponse = T.Object(
  { success: T.Literal(true), data: T.Object({ queued: T.Integer({ description: "Deliveries queued again." }) }) },
  { title: "RecoverResult" },
);

/** The request and success bodies of `/v1/events` and the replay routes as Elysia models (one document component each; routes name them). */
export const eventModels = schemaModels("events.models", {
  DeliveriesRecover: RecoverBody,
  EventList: EventListResponse,
  Redelivery: RedeliveryResponse,
  RecoverResult: RecoverResponse,
});
