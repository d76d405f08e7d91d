/**
 * Aramex: failed-attempt (NDR) reasons (docs/ndr.md). Aramex marks an exception with a non-empty `ProblemCode` and
 * the reason in `Comments` (README.md); the problem codes are in no document we hold: remark keywords.
 * Rows with a `code` map that code; rows without one document a remark the keywords map. Each row's example is a
 * checkpoint as this folder's adapter stores it, and carriers/reasons.test.ts runs every row.
 */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const ARAMEX_REASONS: ReasonTable = {
  rows: [
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords on Comments (problem codes not documented here)",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: "SH033", activity: "Attempted Delivery", remark: "Consignee not available" },
    },
    {
      code: null,
      reason: "customer_refused",
      source: "remark keywords on Comments (problem codes not documented here)",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: "SH033", activity: "Attempted Delivery", remark: "Consignee refused delivery" },
    },
  ],
};
