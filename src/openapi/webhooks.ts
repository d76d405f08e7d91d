/** The OpenAPI 3.1 `webhooks` section (spec: Events): each event's `WebhookPayload` and the signed delivery headers. */
import { isCourierEvent, WEBHOOK_EVENT_TYPES, type WebhookEventType } from "../domain/events.ts";
import { sampleDataFor } from "../modules/webhooks/delivery/payload.ts";
import { WH_ID } from "./examples.ts";
import type { Json } from "./json.ts";

const EVT_EXAMPLE = "evt_01937c2a9e4b7d1f8c6a5b4e3d2c1b0b";

const EVENT_WHEN: Record<WebhookEventType, string> = {
  "tracking.updated":
    "A re-check found more checkpoints than before, with no change to a state that has its own event.",
  "tracking.in_transit": "The shipment's status changed to in_transit.",
  "tracking.out_for_delivery": "The shipment's status changed to out_for_delivery.",
  "tracking.delivered":
    "The shipment's status changed to delivered. Terminal: the service stops following the shipment.",
  "tracking.exception":
    "The status changed to exception, returned or cancelled; `data.status` tells them apart (returned and cancelled are terminal).",
  "tracking.eta_changed":
    "The expected delivery day moved by at least one calendar day: the courier's own estimate, or our predicted date when the courier gives none; `data.eta_change` holds both days. Sent only to webhooks that list it.",
  "tracking.stalled":
    "The unfinished shipment has had no new checkpoint for longer than its lane's usual longest gap between scans (`data.stalled`); once per stall, a new checkpoint ends it. Sent only to webhooks that list it.",
  "courier.degraded":
    "A courier's API became degraded (answered share under 95 % or p95 latency over 3× its 7-day baseline, for 10 minutes), or stepped back from down to degraded. `data.figures` are the figures that triggered it. Not about a shipment: sent to every live webhook that lists it (docs/courier-health.md).",
  "courier.down":
    "A courier's API is down: under 50 % of calls answered for 10 minutes. `data.figures` are the figures that triggered it. Sent only to webhooks that list it.",
  "courier.recovered":
    "A degraded or down courier has been within bounds for 15 minutes; closes the incident (`data.incident_id`). Sent only to webhooks that list it.",
  "tracking.action_updated":
    "An NDR action the account asked for (POST /v1/shipments/{courier}/{tracking_number}/actions) changed status: the courier accepted or rejected it, or it failed; `data.action` holds it, consignee details masked. Sent only to the requesting account's webhooks that list it.",
};

const DELIVERY_HEADERS = (event: WebhookEventType): Json[] => [
  {
    name: "X-Service-Signature",
    in: "header",
    required: true,
    description:
      "`sha256=` + hex HMAC-SHA256 of the exact raw body, keyed with the account's signing secret. Compare in constant time. After a rotation accept the old and the new secret for at least 15 minutes. No header is signed.",
    schema: { type: "string", pattern: "^sha256=[0-9a-f]{64}$" },
    example: "sha256=0f6c1b9b5d1e0e4a4f2f5d2f1c9b1e3a7d6b8c0e2f4a6b8d0e2f4a6b8c0e2f4a",
  },
  {
    name: "X-Webhook-Event",
    in: "header",
    required: true,
    description: "The event type; equals the body's `event`.",
    schema: { type: "string", enum: [event] },
  },
  {
    name: "X-Webhook-Delivery",
    in: "header",
    required: true,
    description:
      "`<webhook_id>-<attempt>`; changes on each retry. Not usable for deduplication: use X-Webhook-Event-Id.",
    schema: { type: "string" },
    example: `${WH_ID}-1`,
  },
  {
    name: "X-Webhook-Mode",
    in: "header",
    required: true,
    description: "`test` for a test fire to a test webhook, otherwise `live`.",
    schema: { type: "string", enum: ["test", "live"] },
  },
  {
    name: "X-Webhook-Event-Id",
    in: "header",
    required: true,
    description:
      "The event's stable id (`evt_…`): the same on every retry, redelivery and recovery of the event. Deduplicate on it. See GET /v1/events.",
    schema: { type: "string", pattern: "^evt_[0-9a-f]{32}$" },
    example: EVT_EXAMPLE,
  },
  {
    name: "webhook-id",
    in: "header",
    required: true,
    description: "Standard Webhooks message id: the event id, as X-Webhook-Event-Id.",
    schema: { type: "string" },
    example: EVT_EXAMPLE,
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description:
      "Standard Webhooks: Unix seconds when this attempt was sent (signed; reject ones too far from your clock to stop replays).",
    schema: { type: "string", pattern: "^[0-9]+$" },
    example: "1793971800",
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    description:
      "Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with the secret's bytes (the base64 after `whsec_`). Verify with the standardwebhooks libraries: `new Webhook(secret).verify(body, headers)`.",
    schema: { type: "string", pattern: "^v1,[A-Za-z0-9+/]+={0,2}$" },
    example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
  },
];

export function webhookEvents(): Json {
  const out: Json = {};
  for (const event of WEBHOOK_EVENT_TYPES) {
    const sample = {
      event,
      enqueued_at: "2026-11-05T13:30:00Z",
      data: { ...sampleDataFor(event, "2026-11-05T13:30:00Z"), courier: "delhivery" },
    };
    const component = isCourierEvent(event) ? "CourierEventPayload" : "WebhookPayload";
    out[event] = {
      post: {
        operationId: `on${event
          .replace("tracking.", "Tracking_")
          .replace("courier.", "Courier_")
          .replace(/_(\w)/g, (_, c: string) => c.toUpperCase())}`,
        summary: event,
        description: `${EVENT_WHEN[event]}\n\nPOSTed to each active webhook that lists \`${event}\`. Answer any 2xx within 5 seconds. Other outcomes are retried after 1 min, 5 min, 30 min, 2 h and 24 h (six attempts in all); 20 failed deliveries in a row deactivate a live webhook.`,
        security: [],
        parameters: DELIVERY_HEADERS(event),
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                allOf: [{ $ref: `#/components/schemas/${component}` }, { properties: { event: { const: event } } }],
              },
              example: sample,
            },
          },
        },
        responses: {
          "2XX": {
            description:
              "Delivered. Any 2xx counts; 301/302/303 are followed as a GET without body, 307/308 re-send the signed body.",
          },
          default: { description: "Anything else (or no answer within 5 s) is retried per the schedule." },
        },
      },
    };
  }
  return out;
}
