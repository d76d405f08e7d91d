/** Deliveries per day as a server-drawn SVG (no script, no inline styles), the numbers also in a table. */
import { html, type SafeHtml } from "../html.ts";
import type { DayCount } from "../service.ts";
import { barPx, labelAt, pct } from "./chart-kit.ts";

const H = 200;
const PAD_B = 24;
const PAD_T = 16;

/** Stacked bars: delivered (bottom) and failed (top) per UTC day. */
export function deliveriesChart(days: DayCount[]): SafeHtml {
  const max = Math.max(1, ...days.map((d) => d.delivered + d.failed));
  const slot = 100 / days.length;
  const bw = slot * 0.6;
  const scale = (n: number) => barPx(n, max, H - PAD_B - PAD_T);
  const total = days.reduce((a, d) => ({ delivered: a.delivered + d.delivered, failed: a.failed + d.failed }), {
    delivered: 0,
    failed: 0,
  });
  const bars = days.map((d, i) => {
    const x = pct(i * slot + (slot - bw) / 2);
    const at = labelAt(i, days.length);
    const hf = scale(d.failed);
    const hd = Math.min(scale(d.delivered), H - PAD_B - PAD_T - hf); // a failure's minimum height stays in the plot
    const base = H - PAD_B;
    return html`<g><title>${d.day}: ${d.delivered} delivered, ${d.failed} failed</title>
<rect class="bar-ok" x="${x}" y="${(base - hd).toFixed(1)}" width="${pct(bw)}" height="${hd.toFixed(1)}"></rect>
<rect class="bar-bad" x="${x}" y="${(base - hd - hf).toFixed(1)}" width="${pct(bw)}" height="${hf.toFixed(1)}"></rect>
<text class="axis" x="${at.x}" y="${H - 6}" text-anchor="${at.anchor}">${d.day.slice(8)}</text></g>`;
  });
  return html`<figure class="chart">
<svg class="plot" height="${H}" role="img" aria-labelledby="chart-title" focusable="false" data-testid="deliveries-chart">
<title id="chart-title">Deliveries per day, last ${days.length} days: ${total.delivered} delivered, ${total.failed} failed</title>
<line class="axis-line" x1="0" y1="${H - PAD_B}" x2="100%" y2="${H - PAD_B}"></line>
<text class="axis" x="4" y="${PAD_T - 4}">max ${max}</text>
${bars}
</svg>
<figcaption><span class="key key-ok" aria-hidden="true"></span> delivered <span class="key key-bad" aria-hidden="true"></span> failed (abandoned or dropped) · by UTC day enqueued</figcaption>
<details><summary>Show as a table</summary><div class="scroll"><table>
<thead><tr><th scope="col">Day (UTC)</th><th scope="col">Delivered</th><th scope="col">Failed</th></tr></thead>
<tbody>${days.map((d) => html`<tr><th scope="row">${d.day}</th><td>${d.delivered}</td><td>${d.failed}</td></tr>`)}</tbody>
</table></div></details>
</figure>`;
}
