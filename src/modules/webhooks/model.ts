/**
 * Webhook schemas (spec: Resources, Webhook; docs/spec-map.md, "Decisions", webhook bodies): requests in `t`, responses
 * in plain TypeBox, registered once in {@link webhookModels} (docs/architecture.md#schemas-one-registration-per-body).
 */
import { Type as T } from "@sinclair/typebox";
import { t } from "elysia";
import { schemaModels } from "../../http/models.ts";
import { WEBHOOK_EVENT_TYPES } from "../../domain/events.ts";
import { literalUnion } from "../../lib/literal-union.ts";
import { Text } from "../../http/text.ts";
import { FREE_TEXT_PATTERN, URL_TOKEN_PATTERN } from "../../http/validation.ts";
import { WebhookPayloadSchema } from "./delivery/payload.ts";
import { CourierEventPayloadSchema } from "../courier-health/event.ts";
import { WEBHOOK_URL_PATTERN } from "./url.ts";
import { HEADER_NAME_PATTERN, HEADER_VALUE_PATTERN, MAX_CUSTOM_HEADERS, MAX_HEADER_VALUE_LENGTH } from "./headers.ts";
import { AuditReportResponse, DeliveryListResponse, EventNameOut, TestFireResponse } from "./delivery-model.ts";

const MAX_URL_LENGTH = 2048;
const MAX_DESCRIPTION_LENGTH = 500;

const EventName = literalUnion(WEBHOOK_EVENT_TYPES, { description: "An event name." });
const Mode = t.Union([t.Literal("test"), t.Literal("live")], {
  description: "`test`: only test fires; `live`: real events (Growth and Business plans).",
});
const Url = Text({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  pattern: WEBHOOK_URL_PATTERN,
  description:
    "https URL of the receiver, at most 2,048 characters: a host name in ASCII (an internationalised name in its `xn--` form) or a public IPv4 (dotted decimal) or [IPv6] (hex groups) address; a port from 1 to 65535; no user name or password, fragment, white space or control characters.",
  examples: ["https://example.com/hooks/courier"],
});
const Events = t.Array(EventName, {
  minItems: 1,
  description: "Non-empty set of event names (duplicates are ignored).",
});
const Description = Text({
  maxLength: MAX_DESCRIPTION_LENGTH,
  pattern: FREE_TEXT_PATTERN,
  description: "Free text; U+0000 is refused.",
});

/** Names: HTTP tokens here (the pattern headers.ts checks too, for its message); the reserved names beside the schema. */
const Headers = t.Record(
  t.String({ pattern: HEADER_NAME_PATTERN }),
  Text({
    maxLength: MAX_HEADER_VALUE_LENGTH,
    pattern: HEADER_VALUE_PATTERN,
    description: "Visible ASCII, spaces or tabs inside only; at most 1,000 characters.",
  }),
  {
    maxProperties: MAX_CUSTOM_HEADERS,
    additionalProperties: false,
    description:
      "Custom headers sent on every attempt, test fires included: at most 5; names are HTTP tokens; hop-by-hop and framing headers, Host, Content-*, User-Agent, webhook-*, X-Webhook-* and X-Service-Signature are refused. Values are stored encrypted and shown masked afterwards.",
    examples: [{ Authorization: "Bearer gw_token_123" }],
  },
);

export const CreateWebhookBody = t.Object(
  {
    url: Url,
    events: Events,
    mode: Mode,
    description: t.Optional(t.Union([Description, t.Null()])),
    headers: t.Optional(Headers),
  },
  { additionalProperties: false },
);
export type CreateWebhookInput = typeof CreateWebhookBody.static;

export const UpdateWebhookBody = t.Object(
  {
    url: t.Optional(Url),
    events: t.Optional(Events),
    mode: t.Optional(Mode),
    description: t.Optional(t.Union([Description, t.Null()])),
    status: t.Optional(
      t.Literal("active", { description: "Reactivates a deactivated webhook and resets its failure count." }),
    ),
    headers: t.Optional(
      t.Union([Headers, t.Null()], {
        description: "Replaces the whole set of custom headers; `{}` or null removes them.",
      }),
    ),
  },
  { additionalProperties: false, description: "Partial update: absent fields keep their values." },
);
export type UpdateWebhookInput = typeof UpdateWebhookBody.static;

/** Optional; `null` is accepted too (spec: "optional JSON object or null"), and the document says so. */
const TestFireBody = t.Optional(
  t.Union([t.Object({ event: t.Optional(EventName) }, { additionalProperties: false }), t.Null()], {
    description: "Optional (or null). Default event: the webhook's first.",
  }),
);

export const WebhookIdParams = t.Object({
  webhook_id: Text({ minLength: 1, maxLength: 100, pattern: URL_TOKEN_PATTERN, description: "Webhook id (`wh_…`)." }),
});

/** The `status` filter's values: the outbox states, and `failed` (docs/webhooks.md, "Delivery log"). */
export const DELIVERY_STATUSES = ["pending", "delivered", "failed", "abandoned", "dropped", "skipped"] as const;

export const DeliveriesQuery = t.Object({
  limit: t.Optional(
    T.Integer({
      minimum: 1,
      maximum: 100,
      default: 20,
      description: "Deliveries per page: an integer, 1 to 100 (default 20).",
    }),
  ),
  cursor: t.Optional(
    Text({ maxLength: 100, pattern: URL_TOKEN_PATTERN, description: "`next_cursor` of the previous page." }),
  ),
  status: t.Optional(
    t.Union(
      DELIVERY_STATUSES.map((s) => t.Literal(s)),
      {
        description:
          "Only deliveries in this state: pending, delivered, abandoned (6 failed attempts), dropped (address check), skipped; `failed`: abandoned, dropped, or pending after a failed attempt.",
      },
    ),
  ),
  event_type: t.Optional(EventName),
  since: t.Optional(
    Text({
      format: "date-time",
      description: "Only deliveries of events enqueued at or after this instant (RFC 3339).",
    }),
  ),
  until: t.Optional(
    Text({ format: "date-time", description: "Only deliveries of events enqueued before this instant (RFC 3339)." }),
  ),
  after_sequence: t.Optional(
    T.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description:
        "Only deliveries with a `sequence` above this, oldest sequence first (what a receiver missed after the last one it processed); test fires have none and are left out.",
    }),
  ),
});

// ---- responses -------------------------------------------------------------------------

const WebhookSchema = T.Object(
  {
    id: T.String({ examples: ["wh_01937c1e5b8a7c4e9f3d2a1b0c9d8e7f"] }),
    url: T.String(),
    events: T.Array(EventNameOut),
    mode: T.Union([T.Literal("test"), T.Literal("live")]),
    description: T.Union([T.String(), T.Null()]),
    status: T.Union([T.Literal("active"), T.Literal("deactivated")]),
    failure_count: T.Integer({ description: "Consecutive failed deliveries (live webhooks); 20 deactivates." }),
    headers: T.Record(T.String(), T.String(), {
      description:
        "Custom header names with masked values: the first 4 characters and `…••••` for values of 12 characters or more, else `••••`.",
      examples: [{ Authorization: "Bear…••••" }],
    }),
    created_at: T.String({ format: "date-time" }),
    updated_at: T.String({ format: "date-time" }),
  },
  { title: "Webhook" },
);

const CreatedWebhookSchema = T.Object(
  {
    ...WebhookSchema.properties,
    secret: T.String({
      description:
        "The raw signing secret on the account's first secret; otherwise a notice beginning with `<` (the secret is shown only once).",
    }),
  },
  { title: "CreatedWebhook" },
);

export const WebhookResponse = T.Object(
  { success: T.Literal(true), data: WebhookSchema },
  { title: "WebhookResponse" },
);
export const CreatedWebhookResponse = T.Object(
  { success: T.Literal(true), data: CreatedWebhookSchema },
  { title: "CreatedWebhookResponse" },
);
export const WebhookListResponse = T.Object(
  { success: T.Literal(true), data: T.Object({ webhooks: T.Array(WebhookSchema), count: T.Integer() }) },
  { title: "WebhookList" },
);
export const SecretResponse = T.Object(
  {
    success: T.Literal(true),
    data: T.Object({ secret: T.String({ description: "The new raw signing secret, shown once." }) }),
  },
  { title: "SecretResponse" },
);
/** The `/v1/webhooks` request and success bodies as Elysia models, one document component per name. */
export const webhookModels = schemaModels("webhooks.models", {
  WebhookCreate: CreateWebhookBody,
  WebhookUpdate: UpdateWebhookBody,
  WebhookTestFire: TestFireBody,
  WebhookResponse,
  CreatedWebhookResponse,
  WebhookList: WebhookListResponse,
  SecretResponse,
  TestFireResult: TestFireResponse,
  ReceiverAuditReport: AuditReportResponse,
  DeliveryList: DeliveryListResponse,
  // No route's body: what every delivery carries (the document's `webhooks` section refers to it by this name).
  WebhookPayload: WebhookPayloadSchema,
  // The courier health events' body (docs/courier-health.md): no shipment behind it.
  CourierEventPayload: CourierEventPayloadSchema,
});
