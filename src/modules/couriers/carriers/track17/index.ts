/** 17TRACK: everything the service knows of this folder (carriers/README.md, "Adding a courier"). */
import { defineCourier } from "../../adapters/define.ts";
import { track17Adapter } from "./adapter.ts";
import { TRACK17_REASONS } from "./reasons.ts";
import { track17Twin } from "./twin.ts";

export const track17 = defineCourier({
  id: "track17",
  adapter: track17Adapter,
  serves: [
    {
      slug: "shadowfax",
      name: "Shadowfax",
      country: "india",
      track17Carrier: 190396,
      awb: {
        pattern: /^SF\d{9,12}[A-Z]{0,3}\d?$/,
        description: "SF, 9 to 12 digits and an optional suffix",
        example: "SF1234567890",
      },
    },
    {
      slug: "ekart",
      name: "Ekart Logistics",
      country: "india",
      track17Carrier: 190271,
      follow: "lookup",
      awb: { pattern: /^[A-Z]{4}\d{10}$/, description: "4 letters and 10 digits", example: "FMPC1234567890" },
    },
    {
      slug: "indiapost",
      name: "India Post",
      country: "india",
      track17Carrier: 9021,
      follow: "lookup",
      awb: {
        pattern: /^[A-Z]{2}\d{9}IN$/,
        description: "UPU S10: 2 letters, 9 digits, IN (e.g. EE123456780IN)",
        example: "EE123456780IN",
      },
    },
    {
      slug: "amazonshipping",
      name: "Amazon Shipping",
      country: "india",
      track17Carrier: 100308,
      awb: {
        pattern: /^(?:TBA|AMZ|ATS)?\d{9,12}$/,
        description: "9 to 12 digits, optionally prefixed TBA, AMZ or ATS",
        example: "TBA1234567890",
      },
    },
    {
      slug: "smartr",
      name: "Smartr Logistics",
      country: "india",
      track17Carrier: 191034,
      awb: { pattern: /^\d{9,12}$/, description: "9 to 12 digits", example: "123456780" },
    },
    {
      slug: "gati",
      name: "Gati",
      country: "india",
      track17Carrier: 100211,
      awb: { pattern: /^\d{9,10}$/, description: "9 or 10 digits", example: "1234567890" },
    },
    {
      slug: "professional",
      name: "The Professional Couriers",
      country: "india",
      track17Carrier: 190235,
      awb: { pattern: /^[A-Z]{3}\d{8,10}$/, description: "3 letters and 8 to 10 digits", example: "BLR123456780" },
    },
    {
      slug: "trackon",
      name: "Trackon Couriers",
      country: "india",
      track17Carrier: 190236,
      awb: {
        pattern: /^(?:[A-Z]\d{8,11}|\d{9,12})$/,
        description: "9 to 12 digits, or a letter and 8 to 11 digits",
        example: "100123456780",
      },
    },
    {
      slug: "shreemaruti",
      name: "Shree Maruti Courier",
      country: "india",
      track17Carrier: 190399,
      awb: { pattern: /^\d{10,16}$/, description: "10 to 16 digits", example: "1234567890" },
    },
    {
      slug: "usps",
      name: "USPS",
      country: "international",
      track17Carrier: 21051,
      awb: {
        pattern: /^(?:9[2-5]\d{20}|[A-Z]{2}\d{9}US)$/,
        description: "22 digits starting 92 to 95, or UPU S10 ending in US",
        example: "9400123456789012345670",
      },
    },
    {
      slug: "dpd",
      name: "DPD",
      country: "international",
      track17Carrier: 100007,
      awb: { pattern: /^\d{14}$/, description: "14 digits", example: "01234567890120" },
    },
  ],
  // 3 requests/s (17TRACK API v2.2 docs); a lookup is a register and about two polls: 1 lookup/s.
  rateLimit: { perSecond: 1, perDay: 0 },
  reasons: TRACK17_REASONS,
  otherEnvPrefixes: ["SEVENTEENTRACK"],
  twin: track17Twin,
});
