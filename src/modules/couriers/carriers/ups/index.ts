/** UPS: everything the service knows of this folder (carriers/README.md, "Adding a courier"). */
import { defineCourier } from "../../adapters/define.ts";
import { upsAdapter } from "./adapter.ts";
import { UPS_REASONS } from "./reasons.ts";
import { upsTwin } from "./twin.ts";

export const ups = defineCourier({
  id: "ups",
  adapter: upsAdapter,
  courier: {
    slug: "ups",
    name: "UPS",
    country: "international",
    track17Carrier: 100002,
    awb: {
      pattern: /^1Z[0-9A-Z]{16}$/,
      description: "1Z followed by 16 letters and digits",
      example: "1Z12345E0205271680",
    },
  },
  // No published limit in our notes: 5/s (432,000 a day) until agreed with the courier.
  rateLimit: { perSecond: 5, perDay: 0 },
  reasons: UPS_REASONS,
  twin: upsTwin,
});
