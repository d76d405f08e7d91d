/** Blue Dart: everything the service knows of this folder (carriers/README.md, "Adding a courier"). */
import { defineCourier } from "../../adapters/define.ts";
import { bluedartAdapter } from "./adapter.ts";
import { BLUEDART_REASONS } from "./reasons.ts";
import { bluedartTwin } from "./twin.ts";

export const bluedart = defineCourier({
  id: "bluedart",
  adapter: bluedartAdapter,
  courier: {
    slug: "bluedart",
    name: "Blue Dart",
    country: "india",
    awb: { pattern: /^\d{8,11}$/, description: "8 to 11 digits", example: "50112345670" },
  },
  // No published limit in our notes: 5/s (432,000 a day) until agreed with the courier.
  rateLimit: { perSecond: 5, perDay: 0 },
  reasons: BLUEDART_REASONS,
  twin: bluedartTwin,
});
