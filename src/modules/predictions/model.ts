/** The wire shape of our predicted delivery (docs/predictions.md), shared by tracking, shipments and payloads. */
import { Type as T } from "@sinclair/typebox";
import { literalUnion } from "../../lib/literal-union.ts";
import { BASES } from "../../domain/predictions.ts";

/** Our own predicted delivery from the courier's and lane's history (docs/predictions.md). */
export const PredictedDeliverySchema = T.Object(
  {
    date: T.String({
      format: "date",
      description:
        "Most likely delivery day (the median transit time), YYYY-MM-DD in the destination's local calendar.",
      examples: ["2026-11-06"],
    }),
    earliest: T.String({
      format: "date",
      description: "Start of the window that held 80 % of past deliveries (p10), YYYY-MM-DD.",
      examples: ["2026-11-05"],
    }),
    latest: T.String({
      format: "date",
      description: "End of that window (p90), YYYY-MM-DD.",
      examples: ["2026-11-08"],
    }),
    basis: literalUnion(BASES, {
      description:
        "Which history backs it, the most specific with at least 30 deliveries: this courier's origin → destination sorting district (`pincode_lane`: first three PIN digits, when both PINs are known), its city lane (`lane`), the destination's region (its PIN's postal region, else the part after the city's comma), or the courier as a whole. Treat a value you do not know as lane-like.",
      examples: ["lane"],
    }),
    sample_size: T.Integer({
      minimum: 30,
      description: "Delivered shipments of the last 90 days behind it.",
      examples: [412],
    }),
  },
  {
    title: "PredictedDelivery",
    description:
      "Our own prediction from delivered shipments of the same courier and lane (docs/predictions.md); absent once the shipment is finished, before its pickup, or when fewer than 30 deliveries back it. The courier's own estimate stays in EstimatedDeliveryDate.",
  },
);

/** `data.eta_change` of a `tracking.eta_changed` delivery. */
export const EtaChangeSchema = T.Object(
  {
    previous: T.String({
      format: "date",
      description: "The expected delivery day before, YYYY-MM-DD.",
      examples: ["2026-11-06"],
    }),
    current: T.String({
      format: "date",
      description: "The expected delivery day now, YYYY-MM-DD.",
      examples: ["2026-11-08"],
    }),
  },
  {
    title: "EtaChange",
    description:
      "Only on `tracking.eta_changed`: the courier's EDD (or our predicted date when it gives none) before and after.",
  },
);
