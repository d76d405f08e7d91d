/**
 * 17TRACK: failed-attempt (NDR) reasons (docs/ndr.md). 17TRACK's sub-statuses name some reasons themselves
 * (fixtures/SOURCE.md lists the mapping); everything else: remark keywords.
 * Rows with a `code` map that code; rows without one document a remark the keywords map. Each row's example is a
 * checkpoint as this folder's adapter stores it, and carriers/reasons.test.ts runs every row.
 */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const TRACK17_REASONS: ReasonTable = {
  rows: [
    {
      code: "EXCEPTION_OTHER",
      reason: "other",
      source: "fixtures/webhook-tracking-updated.json (real payload: sub_status Exception_Other)",
      example: { state: "exception", subStatus: null, rawCode: "Exception_Other", activity: "Shipment exception", remark: null },
    },
    {
      code: null,
      reason: "lost",
      source: "adapter.ts status table (Exception_Lost → lost sub-status)",
      example: { state: "exception", subStatus: "lost", rawCode: "Exception_Lost", activity: "Exception", remark: null },
    },
    {
      code: null,
      reason: "damaged",
      source: "adapter.ts status table (Exception_Damage → damaged sub-status)",
      example: { state: "exception", subStatus: "damaged", rawCode: "Exception_Damage", activity: "Exception", remark: null },
    },
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: "DeliveryFailure_NoBody", activity: "Delivery attempt failed", remark: "Consignee not available" },
    },
  ],
};
