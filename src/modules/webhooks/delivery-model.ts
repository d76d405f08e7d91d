/** The delivery side's response schemas: a test fire, a receiver audit, the delivery log (spec: Resources, Webhook). */
import { Type as T } from "@sinclair/typebox";
import { WEBHOOK_EVENT_TYPES } from "../../domain/events.ts";
import { literalUnion } from "../../lib/literal-union.ts";

export const EventNameOut = literalUnion(WEBHOOK_EVENT_TYPES);

export const TestFireResponse = T.Object(
  {
    success: T.Literal(true),
    data: T.Object({
      delivered: T.Boolean(),
      status_code: T.Union([T.Integer(), T.Null()], {
        description: "HTTP status of the last hop; null when there was no response.",
      }),
      attempt_ms: T.Integer({ description: "Milliseconds the attempt took." }),
    }),
  },
  { title: "TestFireResult" },
);

export const AuditReportResponse = T.Object(
  {
    success: T.Literal(true),
    data: T.Object({
      verdict: T.Union([T.Literal("ok"), T.Literal("failed")], {
        description: "`ok` when `valid` got a 2xx and each other case a 4xx.",
      }),
      cases: T.Array(
        T.Object({
          case: T.Union([
            T.Literal("valid"),
            T.Literal("wrong_signature"),
            T.Literal("stale_timestamp"),
            T.Literal("no_signature"),
          ]),
          status: T.Union([T.Integer(), T.Null()], {
            description: "HTTP status the receiver answered (last hop); null when there was no answer.",
          }),
          verdict: T.Union([T.Literal("pass"), T.Literal("fail")]),
          error: T.Union([T.String(), T.Null()], {
            description:
              "Why there was no answer: timeout, connect, tls, dns, address_blocked, redirect_limit, redirect_invalid, protocol.",
          }),
        }),
        { description: "In the order sent." },
      ),
      guide: T.String({
        description: "The receiver guide (in the service's repository) that says what each case checks.",
      }),
    }),
  },
  { title: "ReceiverAuditReport" },
);

const AttemptSchema = T.Object(
  {
    attempt: T.Integer(),
    url: T.String({ description: "The URL of this hop (redirects are separate entries)." }),
    started_at: T.String({ format: "date-time" }),
    duration_ms: T.Integer(),
    status_code: T.Union([T.Integer(), T.Null()]),
    error: T.Union([T.String(), T.Null()], {
      description: "timeout, connect, tls, dns, address_blocked, redirect_limit, redirect_invalid, protocol",
    }),
    response_snippet: T.Union([T.String(), T.Null()], { description: "First 2 KB of the response body." }),
  },
  { title: "DeliveryAttempt" },
);

const DeliverySchema = T.Object(
  {
    id: T.String(),
    event: T.String({ description: "Same as `event_type` (kept for existing readers)." }),
    event_id: T.Union([T.String(), T.Null()], {
      description: "The event's id (`X-Webhook-Event-Id`, `webhook-id`); null for a test fire.",
    }),
    event_type: EventNameOut,
    sequence: T.Union([T.Integer(), T.Null()], {
      description: "The event's number for this webhook (`X-Webhook-Sequence`); null for a test fire.",
    }),
    mode: T.Union([T.Literal("test"), T.Literal("live")]),
    state: T.String({
      description:
        "pending, delivered, abandoned (6 failed attempts), dropped (address check), skipped (webhook deactivated or changed)",
    }),
    attempts: T.Integer(),
    enqueued_at: T.String({ format: "date-time" }),
    next_attempt_at: T.Union([T.String({ format: "date-time" }), T.Null()]),
    last_status_code: T.Union([T.Integer(), T.Null()]),
    last_error: T.Union([T.String(), T.Null()]),
    created_at: T.String({ format: "date-time" }),
    attempt_log: T.Array(AttemptSchema, { description: "Newest first." }),
  },
  { title: "Delivery" },
);

export const DeliveryListResponse = T.Object(
  {
    success: T.Literal(true),
    data: T.Object({
      deliveries: T.Array(DeliverySchema),
      count: T.Integer(),
      next_cursor: T.Union([T.String(), T.Null()]),
    }),
  },
  { title: "DeliveryList" },
);
