/** Aramex: everything the service knows of this folder (carriers/README.md, "Adding a courier"). */
import { defineCourier } from "../../adapters/define.ts";
import { aramexAdapter } from "./adapter.ts";
import { ARAMEX_REASONS } from "./reasons.ts";
import { aramexTwin } from "./twin.ts";

export const aramex = defineCourier({
  id: "aramex",
  adapter: aramexAdapter,
  courier: {
    slug: "aramex",
    name: "Aramex",
    country: "international",
    track17Carrier: 100006,
    awb: { pattern: /^\d{6,12}$/, description: "6 to 12 digits (usually 10 to 12)", example: "1234567890" },
  },
  // No published limit in our notes: 5/s (432,000 a day) until agreed with the courier.
  rateLimit: { perSecond: 5, perDay: 0 },
  reasons: ARAMEX_REASONS,
  twin: aramexTwin,
});
