/**
 * Blue Dart: failed-attempt (NDR) reasons (docs/ndr.md). The tracking document carries the scan text only
 * (fixtures/tnt.xml); Blue Dart's reason codes are in no document we hold, so reasons come from the remark keywords
 * on the scan text.
 * Rows with a `code` map that code; rows without one document a remark the keywords map. Each row's example is a
 * checkpoint as this folder's adapter stores it, and carriers/reasons.test.ts runs every row.
 */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const BLUEDART_REASONS: ReasonTable = {
  rows: [
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords on the scan text (no code documented)",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: "UD", activity: "CONSIGNEE NOT AVAILABLE", remark: "CONSIGNEE NOT AVAILABLE" },
    },
    {
      code: null,
      reason: "premises_closed",
      source: "remark keywords on the scan text (no code documented)",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: "UD", activity: "OFFICE CLOSED", remark: "OFFICE CLOSED" },
    },
  ],
};
