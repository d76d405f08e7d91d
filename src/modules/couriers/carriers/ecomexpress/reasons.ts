/** Ecom Express NDR reasons (docs/ndr.md): no payload we hold shows a failed attempt's `reason_code_number`: remark keywords. */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const ECOMEXPRESS_REASONS: ReasonTable = {
  rows: [
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords (no reason code number documented)",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: null,
        activity: "Undelivered",
        remark: "Consignee not available",
      },
    },
    {
      code: null,
      reason: "out_of_delivery_area",
      source: "remark keywords (no reason code number documented)",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: null,
        activity: "Undelivered",
        remark: "Out of delivery area",
      },
    },
  ],
};
