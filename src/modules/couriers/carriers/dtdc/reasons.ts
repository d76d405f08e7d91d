/**
 * DTDC: failed-attempt (NDR) reasons (docs/ndr.md). DTDC reports a failed attempt as `NONDLV` / "Not Delivered" with
 * the reason in its remarks: remark keywords.
 * Rows with a `code` map that code; rows without one document a remark the keywords map. Each row's example is a
 * checkpoint as this folder's adapter stores it, and carriers/reasons.test.ts runs every row.
 */
import type { ReasonTable } from "../../adapters/reasons.ts";

export const DTDC_REASONS: ReasonTable = {
  rows: [
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords (no reason code documented)",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: "NONDLV", activity: "Not Delivered", remark: "Consignee not available" },
    },
    {
      code: null,
      reason: "cod_not_ready",
      source: "remark keywords (no reason code documented)",
      example: { state: "exception", subStatus: "delivery_attempt_failed", rawCode: "NONDLV", activity: "Not Delivered", remark: "COD amount not ready" },
    },
  ],
};
