/** Schemas of `GET /v1/estimates` (docs/predictions.md, "Estimates"); the success body registered once in {@link estimateModels}. */
import { Type as T } from "@sinclair/typebox";
import { t } from "elysia";
import { schemaModels } from "../../http/models.ts";
import { Text } from "../../http/text.ts";
import { URL_TOKEN_PATTERN } from "../../http/validation.ts";
import { literalUnion } from "../../lib/literal-union.ts";
import { BASES } from "../../domain/predictions.ts";
import { CITY_PATTERN } from "../../domain/places.ts";

/** A PIN or a city name as `parsePlace` reads them (src/domain/places.ts). */
const PLACE_PATTERN = `^(?:[1-9][0-9]{5}|${CITY_PATTERN.source.slice(1, -1)})$`;

const placeParam = (which: string) =>
  Text({
    minLength: 2,
    maxLength: 60,
    pattern: PLACE_PATTERN,
    description: `The ${which}: an Indian 6-digit PIN (\`560001\`) or a city name (\`Bengaluru\`, \`Bangalore\`: spellings and old names match).`,
    examples: [which === "origin" ? "400001" : "560001"],
  });

export const EstimateQuery = t.Object({
  origin: placeParam("origin"),
  destination: placeParam("destination"),
  courier: t.Optional(
    Text({
      minLength: 1,
      maxLength: 64,
      pattern: URL_TOKEN_PATTERN,
      description: "Only this courier (slug). Absent: every courier with enough history, ranked.",
    }),
  ),
  ship_date: t.Optional(
    Text({
      minLength: 10,
      maxLength: 10,
      pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
      description:
        "The day the parcel is handed to the courier, YYYY-MM-DD in India (from today to 60 days ahead); default today. A Sunday or holiday is picked up the next working day.",
      examples: ["2026-11-30"],
    }),
  ),
});

/** An Indian PIN given by the merchant on follow: a statistics key for estimates and predictions (docs/predictions.md). */
export const PincodeField = (which: string) =>
  t.Optional(
    Text({
      minLength: 6,
      maxLength: 6,
      pattern: "^[1-9][0-9]{5}$",
      description: `The ${which} Indian PIN (6 digits). Keys the pincode lane of predictions and \`GET /v1/estimates\` (docs/predictions.md); never shown back.`,
      examples: [which === "origin" ? "400001" : "560001"],
    }),
  );

const Day = (description: string, example: string) => T.String({ format: "date", description, examples: [example] });

const PlaceSchema = T.Object(
  {
    kind: literalUnion(["pincode", "city"] as const, { description: "How the input was read." }),
    value: T.String({
      description: "The PIN, or the city as one name for all its spellings (lower case).",
      examples: ["560001"],
    }),
  },
  { title: "EstimatePlace" },
);

const EstimateSchema = T.Object(
  {
    courier: T.String({ description: "Courier slug.", examples: ["delhivery"] }),
    date: Day("Most likely delivery day (the median transit time), YYYY-MM-DD in India.", "2026-12-03"),
    earliest: Day("Start of the window that held about 80 % of past deliveries (p10), YYYY-MM-DD.", "2026-12-02"),
    latest: Day("End of that window (p90), YYYY-MM-DD.", "2026-12-05"),
    pickup_date: Day("The day counted as pickup: the ship date, or the next working day after it.", "2026-11-30"),
    basis: literalUnion(BASES, {
      description:
        "Which history backs it, the most specific with at least 30 deliveries: the origin → destination sorting district (`pincode_lane`: first three PIN digits), the city lane (`lane`), the destination's postal region (`region`: first PIN digit), or the courier as a whole.",
      examples: ["pincode_lane"],
    }),
    sample_size: T.Integer({
      minimum: 30,
      description: "Delivered shipments of the last 90 days behind it.",
      examples: [412],
    }),
  },
  { title: "Estimate" },
);

const EstimateListResponse = T.Object(
  {
    success: T.Literal(true),
    data: T.Object({
      origin: PlaceSchema,
      destination: PlaceSchema,
      ship_date: Day("The ship date asked for (or today), YYYY-MM-DD.", "2026-11-30"),
      estimates: T.Array(EstimateSchema, {
        description:
          "One per courier with enough history, earliest `date` first (then earliest `latest`, then more samples).",
      }),
      count: T.Integer(),
      reason: T.Optional(
        literalUnion(["not_enough_history"] as const, {
          description:
            "Only when `estimates` is empty: no courier (or not the one asked for) has 30 deliveries on any basis.",
        }),
      ),
    }),
  },
  { title: "EstimateList" },
);

/** The `/v1/estimates` success body as an Elysia model. */
export const estimateModels = schemaModels("estimates.models", { EstimateList: EstimateListResponse });
