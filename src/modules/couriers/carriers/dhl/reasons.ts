/** DHL NDR reasons (docs/ndr.md): `statusCode` `failure` carries the reason only in the description: remark keywords. */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const DHL_REASONS: ReasonTable = {
  rows: [
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords on the description (no reason code documented)",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "failure",
        activity: "Delivery attempt failed; recipient not available",
        remark: null,
      },
    },
    {
      code: null,
      reason: "address_issue",
      source: "remark keywords on the description (no reason code documented)",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "failure",
        activity: "Delivery attempt failed; incorrect address",
        remark: null,
      },
    },
  ],
};
