/**
 * UPS: failed-attempt (NDR) reasons (docs/ndr.md). UPS sends activity type X with a status code and description; the
 * reason is in the description (the codes are in no document we hold): remark keywords.
 * Rows with a `code` map that code; rows without one document a remark the keywords map. Each row's example is a
 * checkpoint as this folder's adapter stores it, and carriers/reasons.test.ts runs every row.
 */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const UPS_REASONS: ReasonTable = {
  rows: [
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords on the description",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: "048", activity: "Delivery attempt failed. The receiver was not available for delivery.", remark: null },
    },
    {
      code: null,
      reason: "weather_or_disaster",
      source: "remark keywords on the description",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: "X", activity: "Severe weather conditions have delayed delivery.", remark: null },
    },
  ],
};
