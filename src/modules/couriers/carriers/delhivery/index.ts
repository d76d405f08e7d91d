/** Delhivery: everything the service knows of this folder (carriers/README.md, "Adding a courier"). */
import { defineCourier } from "../../adapters/define.ts";
import { delhiveryAdapter } from "./adapter.ts";
import { DELHIVERY_REASONS } from "./reasons.ts";
import { delhiveryTwin } from "./twin.ts";

export const delhivery = defineCourier({
  id: "delhivery",
  adapter: delhiveryAdapter,
  courier: {
    slug: "delhivery",
    name: "Delhivery",
    country: "india",
    awb: { pattern: /^\d{11,14}$/, description: "11 to 14 digits", example: "1234567890120" },
  },
  // 750 requests / 5 min / IP (Delhivery B2C docs): a burst of 150 plus 2/s × 300 s keeps every 5 minutes within it.
  rateLimit: { perSecond: 2, perDay: 0, burst: 150 },
  reasons: DELHIVERY_REASONS,
  twin: delhiveryTwin,
});
