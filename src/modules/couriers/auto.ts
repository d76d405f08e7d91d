/** `courier=auto` (docs/shipments.md#courier-auto-detect-courierauto). */
import { AppError } from "../../lib/errors.ts";
import { COURIERS, normaliseTrackingNumber, type Courier } from "./catalogue.ts";
import { detectCouriers } from "./detect.ts";

/** The value of the `courier` parameter that asks for detection. */
const AUTO = "auto";

const digit = (c: string) => (c >= "0" && c <= "9" ? c.charCodeAt(0) - 48 : (c.charCodeAt(0) - 63) % 10);

/** UPS `1Z` check digit: mod 10 over 15 characters, letters as (code − 63) mod 10 (UPS developer kits). */
export function upsCheckDigitOk(n: string): boolean {
  if (!/^1Z[0-9A-Z]{15}\d$/.test(n)) return false;
  const body = n.slice(2, 17);
  let sum = 0;
  for (let i = 0; i < body.length; i++) sum += digit(body.charAt(i)) * (i % 2 === 0 ? 1 : 2);
  return (10 - (sum % 10)) % 10 === Number(n[17]);
}

/** UPU S10 check digit: weights 8 6 4 2 3 5 9 7, 11 − sum mod 11, 10 → 0, 11 → 5 (UPU standard S10). */
export function s10CheckDigitOk(n: string): boolean {
  const m = /^[A-Z]{2}(\d{8})(\d)[A-Z]{2}$/.exec(n);
  if (!m) return false;
  const w = [8, 6, 4, 2, 3, 5, 9, 7];
  const sum = [...(m[1] ?? "")].reduce((s, d, i) => s + Number(d) * (w[i] ?? 0), 0);
  const c = 11 - (sum % 11);
  return (c === 10 ? 0 : c === 11 ? 5 : c) === Number(m[2]);
}

function mod10Weighted31(n: string): boolean {
  const body = n.slice(0, -1);
  let sum = 0;
  for (let i = 0; i < body.length; i++) sum += Number(body[body.length - 1 - i]) * (i % 2 === 0 ? 3 : 1);
  return (10 - (sum % 10)) % 10 === Number(n.at(-1));
}

/** FedEx: 12-digit Express (mod 11, weights 1 3 7), 15/20/22-digit Ground and SSCC (mod 10, weights 3 1). */
export function fedexCheckDigitOk(n: string): boolean {
  if (!/^\d+$/.test(n)) return false;
  if (n.length === 12) {
    const w = [1, 3, 7];
    let sum = 0;
    for (let i = 0; i < 11; i++) sum += Number(n[10 - i]) * (w[i % 3] ?? 0);
    return (sum % 11) % 10 === Number(n[11]);
  }
  if (n.length === 15 || n.length === 20 || n.length === 22) return mod10Weighted31(n);
  return false;
}

/** Check-digit rules by courier slug; couriers without an entry define none. */
const CHECKS: Record<string, (n: string) => boolean> = {
  ups: upsCheckDigitOk,
  indiapost: s10CheckDigitOk,
  fedex: fedexCheckDigitOk,
  // USPS: S10 for international items, IMpb (22 digits) mod 10 with weights 3 1 (USPS Publication 199).
  usps: (n) => (/^[A-Z]{2}\d{9}US$/.test(n) ? s10CheckDigitOk(n) : mod10Weighted31(n)),
};

/** True when `pattern` rejects `n` once one character is swapped within its class: the format pins that character. */
function pinsCharacters(pattern: RegExp, n: string): boolean {
  for (let i = 0; i < n.length; i++) {
    const c = n.charAt(i);
    const other = c >= "0" && c <= "9" ? String((Number(c) + 5) % 10) : c === "Q" ? "K" : "Q";
    if (!pattern.test(n.slice(0, i) + other + n.slice(i + 1))) return true;
  }
  return false;
}

/** The couriers `courier=auto` may mean for `rawNumber`, best first; `[]` when none fits. Never throws. */
export function autoCandidates(rawNumber: string, couriers: readonly Courier[] = COURIERS): Courier[] {
  const n = normaliseTrackingNumber(rawNumber);
  const fits = detectCouriers(n, couriers);
  const pinned = fits.filter((c) => pinsCharacters(c.awb.pattern, n));
  // A number in a pinned format whose check digit fails is a mistyped number of that courier, not a catch-all match.
  return (pinned.length ? pinned : fits).filter((c) => CHECKS[c.slug]?.(n) ?? true);
}

/**
 * The courier slug for a `courier` parameter: itself, or for `auto` the one candidate.
 * @throws AppError COURIER_AMBIGUOUS (400, with `candidates`) when several fit; INVALID_TRACKING_NUMBER when none does
 */
export function resolveCourierParam(courier: string, rawNumber: string): string {
  if (courier.trim().toLowerCase() !== AUTO) return courier;
  const found = autoCandidates(rawNumber);
  const [only] = found;
  if (only && found.length === 1) return only.slug;
  if (found.length === 0)
    throw new AppError(
      "INVALID_TRACKING_NUMBER",
      "No courier's tracking-number format (and check digit, where the courier defines one) fits this number; pass the courier's slug instead of auto.",
    );
  const slugs = found.map((c) => c.slug);
  throw new AppError(
    "COURIER_AMBIGUOUS",
    `This number fits ${slugs.length} couriers' formats (${slugs.join(", ")}); pass one of them as courier instead of auto.`,
    { candidates: slugs },
  );
}
