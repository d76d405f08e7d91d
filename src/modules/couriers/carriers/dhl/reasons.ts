/**
 * DHL: failed-attempt (NDR) reasons (docs/ndr.md). DHL Unified Tracking gives `statusCode` `failure` for a failed
 * attempt and the reason only in the description: remark keywords.
 * Rows with a `code` map that code; rows without one document a remark the keywords map. Each row's example is a
 * checkpoint as this folder's adapter stores it, and carriers/reasons.test.ts runs every row.
 */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const DHL_REASONS: ReasonTable = {
  rows: [
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords on the description (no reason code documented)",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: "failure", activity: "Delivery attempt failed; recipient not available", remark: null },
    },
    {
      code: null,
      reason: "address_issue",
      source: "remark keywords on the description (no reason code documented)",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: "failure", activity: "Delivery attempt failed; incorrect address", remark: null },
    },
  ],
};
