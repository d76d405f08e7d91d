/** DHL: everything the service knows of this folder (carriers/README.md, "Adding a courier"). */
import { defineCourier } from "../../adapters/define.ts";
import { dhlAdapter } from "./adapter.ts";
import { DHL_REASONS } from "./reasons.ts";
import { dhlTwin } from "./twin.ts";

export const dhl = defineCourier({
  id: "dhl",
  adapter: dhlAdapter,
  courier: {
    slug: "dhl",
    name: "DHL",
    country: "international",
    track17Carrier: 100001,
    awb: {
      pattern: /^(?:\d{10,11}|JJD\d{16,20}|JD\d{16,20}|[A-Z]{3}\d{7}|[0-9A-Z]{12,24})$/,
      description: "a DHL waybill: 10 digits (Express), JJD/JD + 16 to 20 digits, or 12 to 24 letters and digits",
      example: "1234567890",
    },
  },
  // About 250 calls/day on DHL's default developer quota (unverified); 1 call every 5 s.
  rateLimit: { perSecond: 0.2, perDay: 250 },
  reasons: DHL_REASONS,
  twin: dhlTwin,
});
