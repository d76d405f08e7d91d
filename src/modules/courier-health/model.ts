/** Schemas of `GET /v1/couriers/{slug}/health` (docs/courier-health.md); the body registered once in {@link healthModels}. */
import { Type as T } from "@sinclair/typebox";
import { schemaModels } from "../../http/models.ts";
import { COURIER_EVENT_TYPES } from "../../domain/courier-health.ts";
import { literalUnion } from "../../lib/literal-union.ts";
import { HealthStateSchema, HealthWindowSchema } from "../couriers/model.ts";

const Instant = T.String({ format: "date-time" });
const nullable = <S extends ReturnType<typeof T.String> | ReturnType<typeof T.Integer>>(s: S) => T.Union([s, T.Null()]);

export const IncidentSchema = T.Object(
  {
    id: T.String({ description: "`inc_…`" }),
    courier: T.String(),
    state: T.Union([T.Literal("degraded"), T.Literal("down")], { description: "The worst state reached." }),
    started_at: Instant,
    ended_at: T.Union([Instant, T.Null()], { description: "null while the incident is open." }),
    transitions: T.Array(
      T.Object({
        at: Instant,
        state: T.Union([T.Literal("operational"), T.Literal("degraded"), T.Literal("down")]),
        event: literalUnion(COURIER_EVENT_TYPES),
        event_id: T.String({ description: "The event's id (`X-Webhook-Event-Id` of its deliveries)." }),
        figures: HealthWindowSchema,
      }),
      { description: "Each state change, oldest first, with the figures that triggered it." },
    ),
  },
  { title: "CourierIncident" },
);

export const CourierHealthSchema = T.Object(
  {
    courier: T.String({ examples: ["delhivery"] }),
    name: T.String({ examples: ["Delhivery"] }),
    state: HealthStateSchema,
    since: T.Union([Instant, T.Null()], { description: "When the state began; null before the first evaluation." }),
    evaluated_at: T.Union([Instant, T.Null()], { description: "The last evaluation (every minute)." }),
    window_minutes: T.Integer({ description: "The window the thresholds read, minutes." }),
    current: HealthWindowSchema,
    windows: T.Object({ "15m": HealthWindowSchema, "1h": HealthWindowSchema, "24h": HealthWindowSchema }),
    baseline_p95_ms: nullable(T.Integer({ description: "The 7-day p95 latency, ms; null below 200 calls." })),
    oldest_due_recheck_age_s: nullable(
      T.Integer({
        minimum: 0,
        description:
          "Seconds the oldest due re-check of this courier's followed shipments has waited at the evaluation; null when none is due.",
      }),
    ),
    incident: T.Union([IncidentSchema, T.Null()], { description: "The open incident, or null." }),
  },
  { title: "CourierHealth" },
);

const CourierHealthResponse = T.Object(
  { success: T.Literal(true), data: CourierHealthSchema },
  { title: "CourierHealthResponse" },
);

export const healthModels = schemaModels("courier-health.models", { CourierHealthResponse });
