/** FedEx NDR reasons (docs/ndr.md): scan type `DE` with a description; the exception codes are unpublished: remark keywords. */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const FEDEX_REASONS: ReasonTable = {
  rows: [
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords (exception codes not documented here)",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "DE",
        activity: "Delivery exception",
        remark: "Consignee not available",
      },
    },
    {
      code: null,
      reason: "premises_closed",
      source: "remark keywords (exception codes not documented here)",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "DE",
        activity: "Delivery exception",
        remark: "Business closed",
      },
    },
  ],
};
