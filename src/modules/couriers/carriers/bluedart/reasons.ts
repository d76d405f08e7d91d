/** Blue Dart NDR reasons (docs/ndr.md): its failed-attempt scan codes (README.md, "Failed attempts"), else remark keywords. */
import type { ReasonRow, ReasonTable } from "../../adapters/reasons.ts";
import type { ReasonCode } from "../../../../domain/ndr.ts";

/**
 * Failed-attempt `ScanCode`s of group `T`, keyed as the adapter stores them (`<ScanCode>-<ScanGroupType>`), and the
 * reason each means; null: a failed attempt the source files under "other". Source: README.md, "Failed attempts".
 */
export const BLUEDART_NDR_CODES: Readonly<Record<string, ReasonCode | null>> = {
  "003-T": "customer_unavailable",
  "013-T": "customer_unavailable",
  "019-T": "customer_unavailable",
  "020-T": "customer_unavailable",
  "011-T": "customer_refused",
  "076-T": "customer_refused",
  "201-T": "customer_refused",
  "202-T": "customer_refused",
  "204-T": "customer_refused",
  "777-T": "customer_refused",
  "008-T": "address_issue",
  "009-T": "address_issue",
  "010-T": "address_issue",
  "012-T": "address_issue",
  "014-T": "address_issue",
  "056-T": "address_issue",
  "139-T": "address_issue",
  "175-T": "address_issue",
  "217-T": "address_issue",
  "218-T": "address_issue",
  "044-T": "cod_not_ready",
  "062-T": "cod_not_ready",
  "001-T": "rescheduled_by_customer",
  "029-T": "rescheduled_by_customer",
  "120-T": "rescheduled_by_customer",
  "002-T": "out_of_delivery_area",
  "137-T": "out_of_delivery_area",
  "025-T": "damaged",
  "129-T": "damaged",
  "130-T": "damaged",
  "021-T": "lost",
  "070-T": "lost",
  "186-T": "lost",
  "017-T": null,
  "066-T": null,
  "203-T": null,
  "205-T": null,
  "208-T": null,
};

const SOURCE = "Blue Dart scan code table of a production tracking service (README.md, Failed attempts)";

const codeRow = ([code, reason]: [string, ReasonCode]): ReasonRow => ({
  code,
  reason,
  source: SOURCE,
  // Wording no keyword knows, so the row's code is what maps it.
  example: {
    state: "exception",
    subStatus: reason === "damaged" || reason === "lost" ? reason : "delivery_attempt_failed",
    rawCode: code,
    activity: "UNDELIVERED",
    remark: "UNDELIVERED",
  },
});

export const BLUEDART_REASONS: ReasonTable = {
  rows: [
    ...Object.entries(BLUEDART_NDR_CODES)
      .filter((e): e is [string, ReasonCode] => e[1] !== null)
      .map(codeRow),
    {
      code: null,
      reason: "customer_unavailable",
      source: "remark keywords on the scan text",
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
      source: "remark keywords on the scan text (no code in the source)",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "UD",
        activity: "OFFICE CLOSED",
        remark: "OFFICE CLOSED",
      },
    },
    {
      code: null,
      reason: "weather_or_disaster",
      source: "remark keywords on the scan text (no code in the source)",
      example: {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "UD",
        activity: "HEAVY RAIN, DELIVERY NOT POSSIBLE",
        remark: "HEAVY RAIN, DELIVERY NOT POSSIBLE",
      },
    },
  ],
};
