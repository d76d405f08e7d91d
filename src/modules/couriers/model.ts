/** Schemas of `/v1/couriers`: path and query in `t`, responses in TypeBox; the success bodies are registered once in {@link courierModels}. */
import { Type as T } from "@sinclair/typebox";
import { t } from "elysia";
import { schemaModels } from "../../http/models.ts";
import { Text } from "../../http/text.ts";
import { URL_TOKEN_PATTERN } from "../../http/validation.ts";
import { ACTION_NAMES } from "../../domain/actions.ts";
import { literalUnion } from "../../lib/literal-union.ts";

const share = (description: string) => T.Number({ minimum: 0, maximum: 1, description });
const ms = (description: string) => T.Union([T.Integer({ minimum: 0 }), T.Null()], { description });

/** One window's figures of a courier's calls (docs/courier-health.md, "Figures"). */
export const HealthWindowSchema = T.Object(
  {
    calls: T.Integer({
      minimum: 0,
      description: "Calls to the courier in the window, every account's lookups and re-checks.",
    }),
    success_share: T.Union(
      [share("Share of calls the courier answered (a found shipment or a clear not-found)."), T.Null()],
      {
        description: "null without calls.",
      },
    ),
    shares: T.Object(
      {
        ok: share("Found the shipment."),
        not_found: share("Answered that it does not know the number (counted as answered)."),
        timeout: share("No answer within the lookup budget."),
        server_error: share("HTTP 5xx."),
        rate_limited: share("The courier refused for its rate limit (HTTP 429 or its own signal)."),
        malformed: share("An answer we could not read, or the backend could not be reached."),
        other: share("Any other failure (credentials refused)."),
      },
      { description: "Each kind's share of the calls; 0 without calls." },
    ),
    p50_ms: ms("Median call latency, ms, from a fixed histogram (interpolated in its bucket); null without calls."),
    p95_ms: ms("95th percentile call latency, ms; null without calls."),
  },
  { title: "CourierHealthWindow" },
);

export const HealthStateSchema = T.Union(
  [T.Literal("operational"), T.Literal("degraded"), T.Literal("down"), T.Literal("unknown")],
  {
    description:
      "`unknown`: too few calls in the last 10 minutes to judge. Thresholds and hysteresis: docs/courier-health.md.",
  },
);

/** The health summary on each `/v1/couriers` item. */
export const HealthSummarySchema = T.Object(
  {
    state: HealthStateSchema,
    since: T.Union([T.String({ format: "date-time" }), T.Null()], {
      description: "When the state began; null before the first evaluation.",
    }),
    success_share_15m: T.Union([T.Number({ minimum: 0, maximum: 1 }), T.Null()]),
    p95_ms_15m: T.Union([T.Integer({ minimum: 0 }), T.Null()]),
  },
  { title: "CourierHealthSummary", description: "Details: GET /v1/couriers/{slug}/health." },
);

const CourierSchema = T.Object(
  {
    slug: T.String({ pattern: "^[a-z0-9]+$", examples: ["delhivery"] }),
    name: T.String({ examples: ["Delhivery"] }),
    available: T.Boolean({
      description:
        "True when this deployment can look the courier up now. False when it has no credentials for the courier: tracking answers 400 COURIER_NOT_SUPPORTED.",
      examples: [true],
    }),
    sandbox: T.Boolean({
      description:
        "True when the courier answers from the built-in simulator (sandbox mode) rather than the courier's own API.",
      examples: [false],
    }),
    actions: T.Array(literalUnion(ACTION_NAMES), {
      description:
        "The NDR actions this deployment can send to the courier (POST /v1/shipments/{courier}/{tracking_number}/actions): those the courier documents an API for; empty otherwise (docs/ndr-actions.md).",
      examples: [["reattempt", "defer_delivery", "update_consignee", "return_to_origin"]],
    }),
    rate_budget: T.Union(
      [
        T.Object({
          per_second: T.Number({
            description: "Courier calls per second this deployment makes at most, all processes together.",
            examples: [2.5],
          }),
          per_day: T.Union([T.Integer(), T.Null()], {
            description: "Courier calls per UTC day at most; null when the courier sets no daily limit.",
            examples: [null],
          }),
          covers_followed: T.Union([T.Boolean(), T.Null()], {
            description:
              "False when the budget cannot re-check every followed shipment of the courier on schedule (re-checks then run later than scheduled); null until first counted.",
            examples: [true],
          }),
        }),
        T.Null(),
      ],
      {
        description:
          "The courier's call budget, shared by live lookups and re-checks (a share is kept for live lookups); null when this deployment sets none.",
      },
    ),
    health: HealthSummarySchema,
  },
  { title: "Courier" },
);

export const CourierListResponse = T.Object(
  { success: T.Literal(true), data: T.Object({ couriers: T.Array(CourierSchema), count: T.Integer() }) },
  { title: "CourierList" },
);

export const CourierResponse = T.Object(
  { success: T.Literal(true), data: CourierSchema },
  { title: "CourierResponse" },
);

export const SlugParams = t.Object({
  slug: Text({
    minLength: 1,
    maxLength: 100,
    pattern: URL_TOKEN_PATTERN,
    description: "Courier slug, e.g. `delhivery`.",
  }),
});

export const DetectQuery = t.Object({
  tracking_number: Text({
    minLength: 1,
    maxLength: 100,
    pattern: URL_TOKEN_PATTERN,
    description: "The tracking number as the customer has it; spaces and hyphens are ignored, case does not matter.",
  }),
});

export const CourierDetectResponse = T.Object(
  {
    success: T.Literal(true),
    data: T.Object({
      couriers: T.Array(CourierSchema, {
        description: "Couriers whose AWB format accepts the number, most specific format first.",
      }),
      count: T.Integer(),
    }),
  },
  { title: "CourierDetection" },
);

/** The `/v1/couriers` success bodies as Elysia models (one document component each; routes name them). */
export const courierModels = schemaModels("couriers.models", {
  CourierList: CourierListResponse,
  CourierResponse,
  CourierDetection: CourierDetectResponse,
});
