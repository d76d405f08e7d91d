/** Xpressbees: everything the service knows of this folder (carriers/README.md, "Adding a courier"). */
import { defineCourier } from "../../adapters/define.ts";
import { xpressbeesAdapter } from "./adapter.ts";
import { XPRESSBEES_REASONS } from "./reasons.ts";
import { xpressbeesTwin } from "./twin.ts";

export const xpressbees = defineCourier({
  id: "xpressbees",
  adapter: xpressbeesAdapter,
  courier: {
    slug: "xpressbees",
    name: "Xpressbees",
    country: "india",
    awb: { pattern: /^\d{12,16}$/, description: "12 to 16 digits", example: "14123456789010" },
  },
  // No published limit in our notes: 5/s (432,000 a day) until agreed with the courier.
  rateLimit: { perSecond: 5, perDay: 0 },
  reasons: XPRESSBEES_REASONS,
  twin: xpressbeesTwin,
});
