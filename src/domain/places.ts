/**
 * Indian places as the statistics key them (docs/predictions.md, "Pincode lanes" and "City names").
 * PIN structure (India Post, "Postal Index Number"): six digits, the first never 0; the first digit is one of 8
 * postal regions (9: the Army Postal Service), the first two the sub-region or postal circle, the first three the
 * sorting district, the last three the delivery post office.
 */

/** An Indian PIN: six digits, the first 1–9. */
const PINCODE_PATTERN = /^[1-9][0-9]{5}$/;

/** The PIN in `raw` (spaces ignored, `110 001` → `110001`), or null when it is not one. */
export function parsePincode(raw: string | number | null | undefined): string | null {
  const s = String(raw ?? "").replace(/\s+/g, "");
  return PINCODE_PATTERN.test(s) ? s : null;
}

/** The sorting district of a PIN: its first three digits. */
export const sortingDistrict = (pin: string) => pin.slice(0, 3);

/** The statistics key of a PIN's postal region: `pin:` and its first digit (city regions never start so). */
export const pinRegionKey = (pin: string) => `pin:${pin[0]}`;

/**
 * Other spellings of a city → the one the statistics use (lower case). Renamed cities (Bombay → Mumbai, …) and the
 * spellings couriers print for them; a courier's hub name such as `Chennai_Chrompet_DPC (Tamil Nadu)` is cut to its
 * city first ({@link canonicalCity}).
 */
const CITY_ALIASES: Readonly<Record<string, string>> = {
  bangalore: "bengaluru",
  bengalooru: "bengaluru",
  bombay: "mumbai",
  "navi mumbai": "mumbai",
  madras: "chennai",
  calcutta: "kolkata",
  gurgaon: "gurugram",
  "new delhi": "delhi",
  "delhi ncr": "delhi",
  pondicherry: "puducherry",
  trivandrum: "thiruvananthapuram",
  cochin: "kochi",
  ernakulam: "kochi",
  mysore: "mysuru",
  baroda: "vadodara",
  allahabad: "prayagraj",
  poona: "pune",
  mangalore: "mangaluru",
  belgaum: "belagavi",
  hubli: "hubballi",
  calicut: "kozhikode",
  vizag: "visakhapatnam",
  vishakhapatnam: "visakhapatnam",
  secunderabad: "hyderabad",
  benares: "varanasi",
  banaras: "varanasi",
  gauhati: "guwahati",
  cawnpore: "kanpur",
};

/** A city the user may type: letters (any script), spaces, `.`, `'` and `-`, 2 to 60 characters. */
export const CITY_PATTERN = /^[\p{L}][\p{L}\p{M} .'-]{1,59}$/u;

/**
 * The city of `raw` as one key for every spelling: the part before a comma, `_` or `(`, lower case, accents and
 * punctuation dropped, spaces collapsed, then {@link CITY_ALIASES}; null when nothing is left.
 */
export function canonicalCity(raw: string | null | undefined): string | null {
  const head = (raw ?? "").split(/[,_(]/)[0] ?? "";
  const k = head
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[.'-]/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (k === "") return null;
  return CITY_ALIASES[k] ?? k;
}

/** A place as the estimate reads it: a PIN or a city. */
export type Place = { kind: "pincode"; pincode: string } | { kind: "city"; city: string };

/** `raw` as a place, or null when it is neither a PIN nor a city name. */
export function parsePlace(raw: string): Place | null {
  const s = raw.trim();
  if (/^[0-9\s]+$/.test(s)) {
    const pin = parsePincode(s);
    return pin ? { kind: "pincode", pincode: pin } : null;
  }
  if (!CITY_PATTERN.test(s)) return null;
  const city = canonicalCity(s);
  return city ? { kind: "city", city } : null;
}

/** The PINs a courier's answer gives, as columns to set; a missing one leaves the stored (or follow-given) PIN. */
export function courierPincodes(snap: { originPincode?: string | null; destinationPincode?: string | null }) {
  const o = parsePincode(snap.originPincode);
  const d = parsePincode(snap.destinationPincode);
  return { ...(o ? { originPincode: o } : {}), ...(d ? { destinationPincode: d } : {}) };
}
