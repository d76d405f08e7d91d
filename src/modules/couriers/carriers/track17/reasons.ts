/** 17TRACK NDR reasons (docs/ndr.md): some sub-statuses name a reason (fixtures/SOURCE.md); the rest: remark keywords. */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const TRACK17_REASONS: ReasonTable = {
  rows: [
    {
      code: "EXCEPTION_OTHER",
      reason: "other",
      source: "fixtures/webhook-tracking-updated.json (real payload: sub_status Exception_Other)",
      example: {
        state: "exception",
        subStatus: null,
        rawCode: "Exception_Other",
        activity: "Shipment exception",
        remark: null,
      },
    },
    {
      code: null,
      reason: "lost",
      source: "adapter.ts status table (Exception_Lost → lost sub-status)",
      example: {
        state: "exception",
        subStatus: "lost",
        rawCode: "Exception_Lost",
        activity: "Exception",
        remark: null,
      },
    },
    {
      code: null,
      reason: "damaged",
      source: "adapter.ts status table (Exception_Damage → damaged sub-status)",
      example: {
        state: "exception",
        subStatus: "damaged",
        rawCode: "Exception_Damage",
        activity: "Exception",
        remark: null,
      },
    },
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "DeliveryFailure_NoBody",
        activity: "Delivery attempt failed",
        remark: "Consignee not available",
      },
    },
  ],
};
