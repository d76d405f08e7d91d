/** DTDC NDR reasons (docs/ndr.md): a failed attempt is `NONDLV` with the reason in its remarks: remark keywords. */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const DTDC_REASONS: ReasonTable = {
  rows: [
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords (no reason code documented)",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "NONDLV",
        activity: "Not Delivered",
        remark: "Consignee not available",
      },
    },
    {
      code: null,
      reason: "cod_not_ready",
      source: "remark keywords (no reason code documented)",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "NONDLV",
        activity: "Not Delivered",
        remark: "COD amount not ready",
      },
    },
  ],
};
