/** The dashboard's HTML: the `html` tag (src/lib/html.ts, shared with the public tracking page) and formatting helpers. */
export { escapeHtml, html, type Renderable, SafeHtml } from "../../lib/html.ts";

/** Formats an instant as `2026-11-05 10:00 UTC` (pages are in UTC, like the quota month). */
export function fmtTime(d: Date | string | null | undefined): string {
  if (!d) return "—";
  const x = typeof d === "string" ? new Date(d) : d;
  return `${x.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** `12,345` with thin grouping, locale-independent. */
export function fmtInt(n: number): string {
  return n.toLocaleString("en-US");
}
