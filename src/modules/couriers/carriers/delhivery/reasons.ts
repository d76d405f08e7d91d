/** Delhivery NDR reasons (docs/ndr.md): the NSL code seen in a real payload, else remark keywords. */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const DELHIVERY_REASONS: ReasonTable = {
  rows: [
    {
      code: "EOD-11",
      reason: "customer_unavailable",
      source: 'fixtures/packages-json-delivered.json (real payload: EOD-11, Instructions "Consignee Unavailable")',
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "EOD-11",
        activity: "Pending",
        remark: null,
      },
    },
    {
      code: null,
      reason: "customer_refused",
      source: "remark keywords (code not documented)",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "EOD-74",
        activity: "Pending",
        remark: "Consignee refused to accept",
      },
    },
  ],
};
