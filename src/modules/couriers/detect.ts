/** Courier detection (`GET /v1/couriers/detect`): Indian couriers first, then the most specific format. */
import { COURIERS, normaliseTrackingNumber, type Courier } from "./catalogue.ts";

/** Longest input considered; longer ones match nothing (no catalogue format is that long). */
const MAX_DETECT_LENGTH = 64;

/** The perturbations used to measure how specific a pattern is around `n`. */
function probes(n: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < n.length; i++) {
    const c = n.charAt(i);
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

/** Catalogue couriers whose AWB format accepts the normalised `trackingNumber`, most specific first; never throws. */
export function detectCouriers(trackingNumber: string, couriers: readonly Courier[] = COURIERS): Courier[] {
  const n = normaliseTrackingNumber(trackingNumber);
  if (!n || n.length > MAX_DETECT_LENGTH) return [];
  const matching = couriers.filter((c) => c.awb.pattern.test(n));
  if (matching.length <= 1) return matching;
  const ps = probes(n);
  const scored = matching.map((c, i) => ({ c, i, breadth: ps.filter((p) => c.awb.pattern.test(p)).length }));
  scored.sort(
    (a, b) => Number(b.c.country === "india") - Number(a.c.country === "india") || a.breadth - b.breadth || a.i - b.i,
  );
  return scored.map((s) => s.c);
}
