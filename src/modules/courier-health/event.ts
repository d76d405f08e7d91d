/** The payload of the courier health events (docs/courier-health.md, "Events"): its schema and a test fire's sample. */
import { Type as T, type Static } from "@sinclair/typebox";
import { COURIER_EVENT_TYPES, HEALTH, type CourierEventType } from "../../domain/courier-health.ts";
import { literalUnion } from "../../lib/literal-union.ts";
import type { DbOrTx } from "../../db/client.ts";
import { HealthWindowSchema } from "../couriers/model.ts";

/** `data` of a courier health event (docs/courier-health.md, "Events"): the figures that triggered the transition. */
const CourierEventDataSchema = T.Object(
  {
    courier: T.String({ description: "Courier slug.", examples: ["delhivery"] }),
    courier_name: T.String({ examples: ["Delhivery"] }),
    state: literalUnion(["operational", "degraded", "down"] as const, { description: "The state now." }),
    previous_state: literalUnion(["operational", "degraded", "down", "unknown"] as const),
    since: T.String({ format: "date-time", description: "When the new state began (ISO 8601 UTC, to the second)." }),
    incident_id: T.String({
      description:
        "The incident this transition belongs to (`inc_…`); the same from the first event to `courier.recovered`.",
    }),
    window_minutes: T.Integer({ description: "The window the figures cover, minutes." }),
    figures: HealthWindowSchema,
    baseline_p95_ms: T.Union([T.Integer(), T.Null()], {
      description: "The courier's 7-day p95 latency, ms; null with too few calls for a baseline.",
    }),
    enqueued_at: T.String({ format: "date-time", description: "Same as the top-level `enqueued_at`." }),
  },
  { title: "CourierEventData" },
);

/** The body of a courier health event delivery (the document's `CourierEventPayload`). */
export const CourierEventPayloadSchema = T.Object(
  {
    event: literalUnion(COURIER_EVENT_TYPES),
    enqueued_at: T.String({ format: "date-time", description: "ISO 8601 UTC, to the second." }),
    sequence: T.Optional(
      T.Integer({ minimum: 1, description: "As on every delivery: this webhook's number for the event." }),
    ),
    data: CourierEventDataSchema,
  },
  {
    title: "CourierEventPayload",
    description:
      "A courier's API health changed (docs/courier-health.md). Signed and retried like every delivery; deduplicate on `X-Webhook-Event-Id`. `data` is fixed when the event is enqueued.",
  },
);
export type CourierEventData = Static<typeof CourierEventDataSchema>;

/** A courier event's sample `data` (test fires, the document): `synthetic-test-delhivery`, made-up figures. */
export function sampleCourierData(event: CourierEventType, enqueuedAt: string, testPrefix: string): CourierEventData {
  const state = event === "courier.down" ? "down" : event === "courier.degraded" ? "degraded" : "operational";
  const success = state === "down" ? 0.31 : state === "degraded" ? 0.82 : 0.99;
  const failed = Math.round((1 - success) * 10_000) / 10_000;
  return {
    courier: `${testPrefix}delhivery`,
    courier_name: "Delhivery",
    state,
    previous_state: state === "operational" ? "degraded" : "operational",
    since: enqueuedAt,
    incident_id: "inc_01937c2a9e4b7d1f8c6a5b4e3d2c1b0c",
    window_minutes: HEALTH.windowMs / 60_000,
    figures: {
      calls: 240,
      success_share: success,
      shares: { ok: success, not_found: 0, timeout: failed, server_error: 0, rate_limited: 0, malformed: 0, other: 0 },
      p50_ms: 420,
      p95_ms: state === "operational" ? 900 : 4800,
    },
    baseline_p95_ms: 850,
    enqueued_at: enqueuedAt,
  };
}

/** ISO 8601 UTC to the second, as every event spells instants (spec: enqueued_at). */
export const isoSecond = (d: Date | number | string): string => `${new Date(d).toISOString().slice(0, -5)}Z`;

/** Puts one courier event into the outbox in the caller's transaction (the webhooks module's `fanOutCourierEvent`). */
export type CourierEventSink = (
  tx: DbOrTx,
  ev: { eventId: string; type: CourierEventType; enqueuedAt: Date; data: CourierEventData },
) => Promise<number>;
