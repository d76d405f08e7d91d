/** Shared geometry of the server-drawn charts: x in percent of the width, y in CSS px, so text is never scaled. */

/**
 * Height of the bar of a non-zero value, px at least: a value of 1 against a quota of 150,000 still shows. Charts
 * drawn in a viewBox scale their text with the width (12 units became 6 px at 390 px); these use no viewBox.
 */
export const MIN_BAR_PX = 3;

/** A percentage attribute value (`12.35%`). */
export const pct = (n: number): string => `${n.toFixed(2)}%`;

/** `n / max` of `plotPx` px, and at least {@link MIN_BAR_PX} when `n` is above 0. */
export function barPx(n: number, max: number, plotPx: number): number {
  if (n <= 0 || max <= 0) return 0;
  return Math.max(MIN_BAR_PX, (n / max) * plotPx);
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** `2026-11-05` → `5 Nov`. */
export function shortDay(day: string): string {
  return `${Number(day.slice(8, 10))} ${MONTHS[Number(day.slice(5, 7)) - 1]}`;
}

/**
 * Where the label of slot `i` of `n` goes: its centre, except the last slot's, which ends at the right edge so the
 * text is not cut by the chart's box.
 */
export function labelAt(i: number, n: number): { x: string; anchor: "middle" | "end" } {
  return i === n - 1 ? { x: "100%", anchor: "end" } : { x: pct(((i + 0.5) * 100) / n), anchor: "middle" };
}
