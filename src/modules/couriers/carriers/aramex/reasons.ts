/** Aramex NDR reasons (docs/ndr.md): `ProblemCode` codes are unpublished, so remark keywords. */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const ARAMEX_REASONS: ReasonTable = {
  rows: [
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords on Comments (problem codes not documented here)",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "SH033",
        activity: "Attempted Delivery",
        remark: "Consignee not available",
      },
    },
    {
      code: null,
      reason: "customer_refused",
      source: "remark keywords on Comments (problem codes not documented here)",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "SH033",
        activity: "Attempted Delivery",
        remark: "Consignee refused delivery",
      },
    },
  ],
};
