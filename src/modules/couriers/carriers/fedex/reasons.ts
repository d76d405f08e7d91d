/**
 * FedEx: failed-attempt (NDR) reasons (docs/ndr.md). FedEx gives scan type `DE` (delivery exception) with a
 * description; its exception codes are in no document we hold: remark keywords.
 * Rows with a `code` map that code; rows without one document a remark the keywords map. Each row's example is a
 * checkpoint as this folder's adapter stores it, and carriers/reasons.test.ts runs every row.
 */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const FEDEX_REASONS: ReasonTable = {
  rows: [
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords (exception codes not documented here)",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: "DE", activity: "Delivery exception", remark: "Consignee not available" },
    },
    {
      code: null,
      reason: "premises_closed",
      source: "remark keywords (exception codes not documented here)",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: "DE", activity: "Delivery exception", remark: "Business closed" },
    },
  ],
};
