/**
 * Aramex NDR reasons (docs/ndr.md): an exception has a `ProblemCode` and the reason in `Comments`; the codes are in
 * no document we hold, so remark keywords decide.
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
