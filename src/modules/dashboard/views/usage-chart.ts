/** This month's usage by UTC day as a server-drawn SVG (bars, projection, quota line), the numbers also in a table. */
import { fmtInt, html, type SafeHtml } from "../html.ts";
import type { DayUsage } from "../../accounts/quota-days.ts";
import { barPx, labelAt, pct } from "./chart-kit.ts";

const H = 200;
const PAD_B = 24;
const PAD_T = 18;
const PLOT = H - PAD_B - PAD_T;

/** The chart; `days` runs from the 1st to today, `monthDays` is the month's length. */
export function usageByDayChart(days: DayUsage[], quota: number, projected: number, monthDays: number): SafeHtml {
  let total = 0;
  const cum = days.map((d) => {
    total += d.used;
    return { ...d, total };
  });
  const max = Math.max(quota, projected, total, 1) * 1.08;
  const slot = 100 / monthDays;
  const bw = slot * 0.7;
  const y = (n: number) => (H - PAD_B - (n / max) * PLOT).toFixed(1);
  const cx = (i: number) => i * slot + slot / 2;
  const over = projected > quota;
  const bars = cum.map((d, i) => {
    const h = barPx(d.total, max, PLOT);
    return html`<g><title>${d.day}: ${fmtInt(d.used)} that day, ${fmtInt(d.total)} so far</title>
<rect class="bar-ok" x="${pct(cx(i) - bw / 2)}" y="${(H - PAD_B - h).toFixed(1)}" width="${pct(bw)}" height="${h.toFixed(1)}"></rect></g>`;
  });
  const ticks = Array.from({ length: monthDays }, (_, i) => i + 1).filter((n) => n === 1 || n % 5 === 0);
  const last = cum.length - 1;
  return html`<figure class="chart">
<svg class="plot" height="${H}" role="img" aria-labelledby="usage-chart-title" aria-describedby="usage-chart-desc" focusable="false" data-testid="usage-chart">
<title id="usage-chart-title">Used ${fmtInt(total)}, projected ${fmtInt(projected)} by month end, quota ${fmtInt(quota)}</title>
<desc id="usage-chart-desc">One bar per UTC day of this month: the total used up to that day. A dashed line runs to the projected month-end total; a dashed line across is the quota.</desc>
<line class="axis-line" x1="0" y1="${H - PAD_B}" x2="100%" y2="${H - PAD_B}"></line>
${bars}
${last >= 0 ? html`<line class="${over ? "proj-line bad-line" : "proj-line"}" x1="${pct(cx(last))}" y1="${y(total)}" x2="99.7%" y2="${y(projected)}"></line>` : ""}
<line class="quota-line" x1="0" y1="${y(quota)}" x2="100%" y2="${y(quota)}"></line>
<text class="axis" x="4" y="${Number(y(quota)) - 4}">quota ${fmtInt(quota)}</text>
${ticks.map((n) => {
  const at = labelAt(n - 1, monthDays);
  return html`<text class="axis" x="${at.x}" y="${H - 6}" text-anchor="${at.anchor}">${n}</text>`;
})}
</svg>
<figcaption><span class="key key-ok" aria-hidden="true"></span> used so far: <strong data-testid="usage-so-far">${fmtInt(total)}</strong>
· <span class="key ${over ? "key-bad" : "key-proj"}" aria-hidden="true"></span> projected by month end at this pace:
<strong data-testid="usage-projected">${fmtInt(projected)}</strong>${over ? html` — <strong class="bad">over the quota</strong>` : ""} · by UTC day</figcaption>
<details><summary>Show as a table</summary><div class="scroll"><table data-testid="usage-days">
<thead><tr><th scope="col">Day (UTC)</th><th scope="col">Used that day</th><th scope="col">Total so far</th></tr></thead>
<tbody>${cum.map((d) => html`<tr><th scope="row">${d.day}</th><td data-label="Used that day">${fmtInt(d.used)}</td><td data-label="Total so far">${fmtInt(d.total)}</td></tr>`)}</tbody>
</table></div></details>
</figure>`;
}
