/** The curated courier catalogue (spec: Resources, Courier); `follow: lookup` per the spec's two couriers. */
export type AdapterId =
  | "delhivery"
  | "bluedart"
  | "dhl"
  | "fedex"
  | "ups"
  | "dtdc"
  | "aramex"
  | "ecomexpress"
  | "xpressbees"
  | "track17";

export interface Courier {
  slug: string;
  name: string;
  country: "india" | "international";
  awb: { pattern: RegExp; description: string; example: string };
  adapter: AdapterId;
  /** 17TRACK carrier code, for couriers served through the aggregator. */
  track17Carrier?: number;
  /** `scheduled`: re-checked `RECHECKS_PER_DAY` times a day (src/domain/following.ts); `lookup`: only on request. */
  follow: "scheduled" | "lookup";
}

type Entry = Omit<Courier, "follow"> & Partial<Pick<Courier, "follow">>;

const ENTRIES: Entry[] = [
  {
    slug: "delhivery",
    name: "Delhivery",
    country: "india",
    adapter: "delhivery",
    awb: { pattern: /^\d{11,14}$/, description: "11 to 14 digits", example: "1234567890120" },
  },
  {
    slug: "bluedart",
    name: "Blue Dart",
    country: "india",
    adapter: "bluedart",
    awb: { pattern: /^\d{8,11}$/, description: "8 to 11 digits", example: "50112345670" },
  },
  {
    slug: "dtdc",
    name: "DTDC",
    country: "india",
    adapter: "dtdc",
    awb: {
      pattern: /^(?:[A-Z]\d{8}|\d{9,12})$/,
      description: "a letter and 8 digits, or 9 to 12 digits",
      example: "D12345670",
    },
  },
  {
    slug: "ecomexpress",
    name: "Ecom Express",
    country: "india",
    adapter: "ecomexpress",
    awb: { pattern: /^\d{9,12}$/, description: "9 to 12 digits", example: "8012345670" },
  },
  {
    slug: "xpressbees",
    name: "Xpressbees",
    country: "india",
    adapter: "xpressbees",
    awb: { pattern: /^\d{12,16}$/, description: "12 to 16 digits", example: "14123456789010" },
  },
  {
    slug: "shadowfax",
    name: "Shadowfax",
    country: "india",
    adapter: "track17",
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
    adapter: "track17",
    track17Carrier: 190271,
    follow: "lookup",
    awb: { pattern: /^[A-Z]{4}\d{10}$/, description: "4 letters and 10 digits", example: "FMPC1234567890" },
  },
  {
    slug: "indiapost",
    name: "India Post",
    country: "india",
    adapter: "track17",
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
    adapter: "track17",
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
    adapter: "track17",
    track17Carrier: 191034,
    awb: { pattern: /^\d{9,12}$/, description: "9 to 12 digits", example: "123456780" },
  },
  {
    slug: "gati",
    name: "Gati",
    country: "india",
    adapter: "track17",
    track17Carrier: 100211,
    awb: { pattern: /^\d{9,10}$/, description: "9 or 10 digits", example: "1234567890" },
  },
  {
    slug: "professional",
    name: "The Professional Couriers",
    country: "india",
    adapter: "track17",
    track17Carrier: 190235,
    awb: { pattern: /^[A-Z]{3}\d{8,10}$/, description: "3 letters and 8 to 10 digits", example: "BLR123456780" },
  },
  {
    slug: "trackon",
    name: "Trackon Couriers",
    country: "india",
    adapter: "track17",
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
    adapter: "track17",
    track17Carrier: 190399,
    awb: { pattern: /^\d{10,16}$/, description: "10 to 16 digits", example: "1234567890" },
  },
  {
    slug: "dhl",
    name: "DHL",
    country: "international",
    adapter: "dhl",
    track17Carrier: 100001,
    awb: {
      pattern: /^(?:\d{10,11}|JJD\d{16,20}|JD\d{16,20}|[A-Z]{3}\d{7}|[0-9A-Z]{12,24})$/,
      description: "a DHL waybill: 10 digits (Express), JJD/JD + 16 to 20 digits, or 12 to 24 letters and digits",
      example: "1234567890",
    },
  },
  {
    slug: "fedex",
    name: "FedEx",
    country: "international",
    adapter: "fedex",
    track17Carrier: 100003,
    awb: {
      pattern: /^(?:\d{12}|\d{15}|\d{20}|\d{22})$/,
      description: "12, 15, 20 or 22 digits",
      example: "123456789010",
    },
  },
  {
    slug: "ups",
    name: "UPS",
    country: "international",
    adapter: "ups",
    track17Carrier: 100002,
    awb: {
      pattern: /^1Z[0-9A-Z]{16}$/,
      description: "1Z followed by 16 letters and digits",
      example: "1Z12345E0205271680",
    },
  },
  {
    slug: "aramex",
    name: "Aramex",
    country: "international",
    adapter: "aramex",
    track17Carrier: 100006,
    awb: { pattern: /^\d{6,12}$/, description: "6 to 12 digits (usually 10 to 12)", example: "1234567890" },
  },
  {
    slug: "usps",
    name: "USPS",
    country: "international",
    adapter: "track17",
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
    adapter: "track17",
    track17Carrier: 100007,
    awb: { pattern: /^\d{14}$/, description: "14 digits", example: "01234567890120" },
  },
];

export const COURIERS: readonly Courier[] = ENTRIES.map((e) => ({ follow: "scheduled", ...e }));

const BY_SLUG = new Map(COURIERS.map((c) => [c.slug, c]));

export function courierBySlug(slug: string): Courier | undefined {
  return BY_SLUG.get(slug);
}

/** Normalises a tracking number as customers type it: trims, drops spaces and hyphens, upper-cases. */
export function normaliseTrackingNumber(raw: string): string {
  return raw
    .trim()
    .replace(/[\s-]+/g, "")
    .toUpperCase();
}
