/** Delhivery NDR reasons (docs/ndr.md): its NSL codes (README.md, "Failed attempts"), else remark keywords. */
import type { ReasonRow, ReasonTable } from "../../adapters/reasons.ts";
import type { ReasonCode } from "../../../../domain/ndr.ts";

/**
 * NSL `StatusCode`s of a delivery that failed or could not be made (under StatusType UD), the reason each means (null:
 * none of ours) and Delhivery's text for it. Sources: README.md, "Failed attempts".
 */
export const DELHIVERY_NDR_CODES: Readonly<Record<string, { reason: ReasonCode | null; text: string }>> = {
  "EOD-11": { reason: "customer_unavailable", text: "Consignee Unavailable" },
  "EOD-6": { reason: "customer_refused", text: "Customer Refused to accept/Order Cancelled" },
  "EOD-111": { reason: "customer_refused", text: "Consignee opened the package and refused to accept" },
  "EOD-74": { reason: "address_issue", text: "Bad/Incomplete Address" },
  "EOD-15": { reason: "address_issue", text: "Consignee moved/shifted" },
  "EOD-16": { reason: "cod_not_ready", text: "Payment not ready with customer" },
  "EOD-40": { reason: "cod_not_ready", text: "Payment Mode / Amt Dispute" },
  "EOD-3": { reason: "rescheduled_by_customer", text: "Asked to reschedule on" },
  "DLYDC-107": { reason: "premises_closed", text: "Office/Institute closed" },
  "SC-102": { reason: "out_of_delivery_area", text: "ODA Shipments" },
  "DLYDC-132": { reason: "out_of_delivery_area", text: "Out of Delivery Area (ODA)" },
  "DLYDC-101": { reason: "weather_or_disaster", text: "Heavy Rain/ Fog" },
  "DLYDC-102": { reason: "weather_or_disaster", text: "Natural Disaster" },
  "EOD-43": { reason: null, text: "Self Collect" },
  "EOD-69": { reason: null, text: "Customer asked for open delivery" },
  "EOD-86": { reason: null, text: "Not attempted" },
  "EOD-104": { reason: null, text: "Entry restricted area" },
};

const SOURCE = "Delhivery NSL code table of a production tracking service (README.md, Failed attempts)";

const codeRow = ([code, reason]: [string, ReasonCode]): ReasonRow => ({
  code,
  reason,
  source:
    code === "EOD-11"
      ? 'fixtures/packages-json-delivered.json (real payload: EOD-11, "Consignee Unavailable")'
      : SOURCE,
  // Instructions no keyword knows, so the row's code is what maps it.
  example: {
    state: "exception",
    subStatus: "delivery_attempt_failed",
    rawCode: code,
    activity: "Pending",
    remark: null,
  },
});

export const DELHIVERY_REASONS: ReasonTable = {
  rows: [
    ...Object.entries(DELHIVERY_NDR_CODES)
      .filter((e): e is [string, { reason: ReasonCode; text: string }] => e[1].reason !== null)
      .map(([code, { reason }]) => codeRow([code, reason])),
    {
      code: "RT-104",
      reason: "damaged",
      source: SOURCE,
      example: { state: "exception", subStatus: "damaged", rawCode: "RT-104", activity: "Pending", remark: null },
    },
    {
      code: "LT-100",
      reason: "lost",
      source: SOURCE,
      example: { state: "exception", subStatus: "lost", rawCode: "LT-100", activity: "Lost", remark: null },
    },
    {
      code: null,
      reason: "customer_refused",
      source: "remark keywords on Instructions",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "EOD-6",
        activity: "Pending",
        remark: "Consignee refused to accept",
      },
    },
  ],
};
