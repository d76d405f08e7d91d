/** Ecom Express: everything the service knows of this folder (carriers/README.md, "Adding a courier"). */
import { defineCourier } from "../../adapters/define.ts";
import { ecomexpressAdapter } from "./adapter.ts";
import { ECOMEXPRESS_REASONS } from "./reasons.ts";
import { ecomexpressTwin } from "./twin.ts";

export const ecomexpress = defineCourier({
  id: "ecomexpress",
  adapter: ecomexpressAdapter,
  courier: {
    slug: "ecomexpress",
    name: "Ecom Express",
    country: "india",
    awb: { pattern: /^\d{9,12}$/, description: "9 to 12 digits", example: "8012345670" },
  },
  // No published limit in our notes: 5/s (432,000 a day) until agreed with the courier.
  rateLimit: { perSecond: 5, perDay: 0 },
  reasons: ECOMEXPRESS_REASONS,
  twin: ecomexpressTwin,
});
