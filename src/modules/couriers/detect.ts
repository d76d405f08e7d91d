/**
 * Courier detection (`GET /v1/couriers/detect`, docs/shipments.md, "Courier auto-detect"): which catalogue couriers' AWB formats
 * accept a tracking number, best first.
 *
 * "Best" = the most specific format. Specificity is measured, not hand-ranked,
 * so it stays right when a pattern in the catalogue changes: each matching
 * pattern is probed with small perturbations of the number (one character
 * swapped for another class, one to four characters added or removed); the
 * fewer perturbations a pattern still accepts, the more specific it is
 * (`1Z…`, `…IN`, `SF…` reject most; "9 to 12 digits" accepts several; a
 * catch-all alphanumeric range accepts nearly all). Indian couriers come
 * before international ones (the catalogue's home market: a bare 15-digit
 * number is far more likely an Xpressbees AWB than a FedEx one), then the
 * most specific format, then catalogue order.
 */
import { COURIERS, normaliseTrackingNumber, type Courier } from "./catalogue.ts";

/** Longest input considered; longer ones match nothing (no catalogue format is that long). */
export const MAX_DETECT_LENGTH = 64;

/** The perturbations used to measure how specific a pattern is around `n`. */
function probes(n: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < n.length; i++) {
    const c = n[i]!;
    const isDigit = c >= "0" && c <= "9";
    const swaps = isDigit ? ["X"] : [c === "A" ? "B" : "A", "5"];
    for (const s of swaps) out.push(n.slice(0, i) + s + n.slice(i + 1));
  }
  for (let k = 1; k <= 4; k++) {
    out.push(n + "1".repeat(k), "1".repeat(k) + n);
    if (n.length > k) out.push(n.slice(0, -k), n.slice(k));
  }
  return out;
}

/**
 * Catalogue couriers whose AWB format accepts `trackingNumber` (normalised the
 * way `/v1/track` normalises it: trimmed, spaces and hyphens dropped,
 * upper-cased), most specific first. Returns `[]` for an empty or over-long
 * number. Never throws.
 */
export function detectCouriers(trackingNumber: string, couriers: readonly Courier[] = COURIERS): Courier[] {
  const n = normaliseTrackingNumber(trackingNumber);
  if (!n || n.length > MAX_DETECT_LENGTH) return [];
  const matching = couriers.filter((c) => c.awb.pattern.test(n));
  if (matching.length <= 1) return matching;
  const ps = probes(n);
  const scored = matching.map((c, i) => ({ c, i, breadth: ps.filter((p) => c.awb.pattern.test(p)).length }));
  scored.sort((a, b) => Number(b.c.country === "india") - Number(a.c.country === "india") || a.breadth - b.breadth || a.i - b.i);
  return scored.map((s) => s.c);
}
