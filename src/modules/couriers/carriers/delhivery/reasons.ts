/**
 * Delhivery: failed-attempt (NDR) reasons (docs/ndr.md). Delhivery sends an NSL `StatusCode` with each scan; only the
 * NDR code seen in a real payload is listed, the other NDR codes (README.md) fall back on the remark keywords
 * (`Instructions`).
 * Rows with a `code` map that code; rows without one document a remark the keywords map. Each row's example is a
 * checkpoint as this folder's adapter stores it, and carriers/reasons.test.ts runs every row.
 */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const DELHIVERY_REASONS: ReasonTable = {
  rows: [
    {
      code: "EOD-11",
      reason: "customer_unavailable",
      source: "fixtures/packages-json-delivered.json (real payload: EOD-11, Instructions \"Consignee Unavailable\")",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: "EOD-11", activity: "Pending", remark: null },
    },
    {
      code: null,
      reason: "customer_refused",
      source: "remark keywords (code not documented)",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: "EOD-74", activity: "Pending", remark: "Consignee refused to accept" },
    },
  ],
};
