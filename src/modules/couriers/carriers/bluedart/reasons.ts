/** Blue Dart NDR reasons (docs/ndr.md): scan text only, so remark keywords. */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const BLUEDART_REASONS: ReasonTable = {
  rows: [
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords on the scan text (no code documented)",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "UD",
        activity: "CONSIGNEE NOT AVAILABLE",
        remark: "CONSIGNEE NOT AVAILABLE",
      },
    },
    {
      code: null,
      reason: "premises_closed",
      source: "remark keywords on the scan text (no code documented)",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "UD",
        activity: "OFFICE CLOSED",
        remark: "OFFICE CLOSED",
      },
    },
  ],
};
