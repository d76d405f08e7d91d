/** Xpressbees NDR reasons (docs/ndr.md): `UD` with the reason in the message; remark keywords. */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const XPRESSBEES_REASONS: ReasonTable = {
  rows: [
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords on the message",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "UD",
        activity: "Undelivered: Consignee not available",
        remark: "Undelivered: Consignee not available",
      },
    },
    {
      code: null,
      reason: "rescheduled_by_customer",
      source: "remark keywords on the message",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "UD",
        activity: "Undelivered: Customer asked to reschedule",
        remark: "Undelivered: Customer asked to reschedule",
      },
    },
    {
      code: null,
      reason: "lost",
      source: "adapter.ts status table (LOST → lost sub-status)",
      example: {
        state: "exception",
        subStatus: "lost",
        rawCode: "LOST",
        activity: "Shipment status updated",
        remark: null,
      },
    },
    {
      code: null,
      reason: "damaged",
      source: "adapter.ts status table (DMG → damaged sub-status)",
      example: {
        state: "exception",
        subStatus: "damaged",
        rawCode: "DMG",
        activity: "Shipment status updated",
        remark: null,
      },
    },
  ],
};
