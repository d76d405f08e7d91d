/** UPS NDR reasons (docs/ndr.md): activity type X carries the reason in its description: remark keywords. */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const UPS_REASONS: ReasonTable = {
  rows: [
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords on the description",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "048",
        activity: "Delivery attempt failed. The receiver was not available for delivery.",
        remark: null,
      },
    },
    {
      code: null,
      reason: "weather_or_disaster",
      source: "remark keywords on the description",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "X",
        activity: "Severe weather conditions have delayed delivery.",
        remark: null,
      },
    },
  ],
};
