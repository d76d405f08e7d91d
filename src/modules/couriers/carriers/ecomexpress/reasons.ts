/**
 * Ecom Express: failed-attempt (NDR) reasons (docs/ndr.md). Ecom Express sends `reason_code_number` with each scan,
 * but no payload we hold shows a failed attempt's number (README.md): remark keywords.
 * Rows with a `code` map that code; rows without one document a remark the keywords map. Each row's example is a
 * checkpoint as this folder's adapter stores it, and carriers/reasons.test.ts runs every row.
 */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const ECOMEXPRESS_REASONS: ReasonTable = {
  rows: [
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords (no reason code number documented)",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: null, activity: "Undelivered", remark: "Consignee not available" },
    },
    {
      code: null,
      reason: "out_of_delivery_area",
      source: "remark keywords (no reason code number documented)",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: null, activity: "Undelivered", remark: "Out of delivery area" },
    },
  ],
};
