/** DTDC: everything the service knows of this folder (carriers/README.md, "Adding a courier"). */
import { defineCourier } from "../../adapters/define.ts";
import { dtdcAdapter } from "./adapter.ts";
import { DTDC_REASONS } from "./reasons.ts";
import { dtdcTwin } from "./twin.ts";

export const dtdc = defineCourier({
  id: "dtdc",
  adapter: dtdcAdapter,
  courier: {
    slug: "dtdc",
    name: "DTDC",
    country: "india",
    awb: {
      pattern: /^(?:[A-Z]\d{8}|\d{9,12})$/,
      description: "a letter and 8 digits, or 9 to 12 digits",
      example: "D12345670",
    },
  },
  // No published limit in our notes: 5/s (432,000 a day) until agreed with the courier.
  rateLimit: { perSecond: 5, perDay: 0 },
  reasons: DTDC_REASONS,
  twin: dtdcTwin,
});
