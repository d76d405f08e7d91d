/** FedEx: everything the service knows of this folder (carriers/README.md, "Adding a courier"). */
import { defineCourier } from "../../adapters/define.ts";
import { fedexAdapter } from "./adapter.ts";
import { FEDEX_REASONS } from "./reasons.ts";
import { fedexTwin } from "./twin.ts";

export const fedex = defineCourier({
  id: "fedex",
  adapter: fedexAdapter,
  courier: {
    slug: "fedex",
    name: "FedEx",
    country: "international",
    track17Carrier: 100003,
    awb: {
      pattern: /^(?:\d{12}|\d{15}|\d{20}|\d{22})$/,
      description: "12, 15, 20 or 22 digits",
      example: "123456789010",
    },
  },
  // No published limit in our notes: 5/s (432,000 a day) until agreed with the courier.
  rateLimit: { perSecond: 5, perDay: 0 },
  reasons: FEDEX_REASONS,
  twin: fedexTwin,
});
