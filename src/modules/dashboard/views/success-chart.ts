/** Webhook delivery success per UTC day as a server-drawn SVG (docs/dashboard.md, "Overview"), also as a table. */
import { fmtInt, html, type SafeHtml } from "../html.ts";
import type { DayCount } from "../service.ts";
import { labelAt, MIN_BAR_PX, pct, shortDay } from "./chart-kit.ts";

const H = 200;
const PAD_B = 24;
const PAD_T = 22;
const PLOT = H - PAD_B - PAD_T;

/** `delivered ÷ (delivered + failed)` as `97.5%`, or null for a day without finished deliveries. */
function successRate(d: { delivered: number; failed: number }): string | null {
  const n = d.delivered + d.failed;
  return n === 0 ? null : `${Math.round((d.delivered / n) * 1000) / 10}%`;
}

/**
 * One bar per day at full height when the day has finished deliveries: the delivered share green from the bottom,
 * the failed share red on top, each at least {@link MIN_BAR_PX} when not 0 (one failure among thousands shows).
 * Days without finished deliveries have no bar. Labels: every 7th day back from today.
 */
export function successByDayChart(days: DayCount[]): SafeHtml {
  const n = days.length;
  const slot = 100 / n;
  const bw = slot * 0.7;
  const base = H - PAD_B;
  const total = days.reduce((a, d) => ({ delivered: a.delivered + d.delivered, failed: a.failed + d.failed }), {
    delivered: 0,
    failed: 0,
  });
  const bars = days.map((d, i) => {
    const sum = d.delivered + d.failed;
    if (sum === 0) return "";
    let hf = d.failed === 0 ? 0 : Math.max(MIN_BAR_PX, (d.failed / sum) * PLOT);
    if (d.delivered > 0) hf = Math.min(hf, PLOT - MIN_BAR_PX);
    const hd = PLOT - hf;
    const x = pct(i * slot + (slot - bw) / 2);
    return html`<g><title>${d.day}: ${successRate(d)} delivered (${fmtInt(d.delivered)} delivered, ${fmtInt(d.failed)} failed)</title>
${hd > 0 ? html`<rect class="bar-ok" x="${x}" y="${(base - hd).toFixed(1)}" width="${pct(bw)}" height="${hd.toFixed(1)}"></rect>` : ""}
${hf > 0 ? html`<rect class="bar-bad" x="${x}" y="${PAD_T}" width="${pct(bw)}" height="${hf.toFixed(1)}"></rect>` : ""}</g>`;
  });
  const labels = days.flatMap((d, i) => {
    if ((n - 1 - i) % 7 !== 0) return [];
    const at = labelAt(i, n);
    return [html`<text class="axis" x="${at.x}" y="${H - 6}" text-anchor="${at.anchor}">${shortDay(d.day)}</text>`];
  });
  const overall = successRate(total);
  return html`<figure class="chart">
<svg class="plot" height="${H}" role="img" aria-labelledby="success-chart-title" aria-describedby="success-chart-desc" focusable="false" data-testid="success-chart">
<title id="success-chart-title">Webhook delivery success by day, last ${n} days: ${overall ? `${overall} delivered` : "no finished deliveries"} (${fmtInt(total.delivered)} delivered, ${fmtInt(total.failed)} failed)</title>
<desc id="success-chart-desc">One bar per UTC day with finished deliveries, full height: the delivered share from the bottom, the failed share on top. Days without finished deliveries have no bar.</desc>
<line class="axis-line" x1="0" y1="${PAD_T}" x2="100%" y2="${PAD_T}"></line>
<text class="axis" x="0" y="${PAD_T - 6}">100%</text>
<line class="axis-line" x1="0" y1="${base}" x2="100%" y2="${base}"></line>
${bars}
${labels}
</svg>
<figcaption><span class="key key-ok" aria-hidden="true"></span> delivered <span class="key key-bad" aria-hidden="true"></span> failed (abandoned or dropped), as a share of each UTC day's finished deliveries · <span data-testid="success-chart-total">${overall ? `${overall} delivered` : "no finished deliveries"}</span> over ${n} days</figcaption>
<details><summary>Show as a table</summary><div class="scroll"><table data-testid="success-days">
<thead><tr><th scope="col">Day (UTC)</th><th scope="col">Delivered</th><th scope="col">Failed</th><th scope="col">Success</th></tr></thead>
<tbody>${days.map((d) => html`<tr><th scope="row">${d.day}</th><td data-label="Delivered">${fmtInt(d.delivered)}</td><td data-label="Failed">${fmtInt(d.failed)}</td><td data-label="Success">${successRate(d) ?? "—"}</td></tr>`)}</tbody>
</table></div></details>
</figure>`;
}
