/** Deliveries per day as a server-drawn SVG (no script, no inline styles), the numbers also in a table. */
import { html, type SafeHtml } from "../html.ts";
import type { DayCount } from "../service.ts";

const W = 700;
const H = 200;
const PAD_B = 24;
const PAD_T = 16;

/** Stacked bars: delivered (bottom) and failed (top) per UTC day. */
export function deliveriesChart(days: DayCount[]): SafeHtml {
  const max = Math.max(1, ...days.map((d) => d.delivered + d.failed));
  const slot = W / days.length;
  const bw = Math.max(4, slot * 0.6);
  const scale = (n: number) => (n / max) * (H - PAD_B - PAD_T);
  const total = days.reduce((a, d) => ({ delivered: a.delivered + d.delivered, failed: a.failed + d.failed }), {
    delivered: 0,
    failed: 0,
  });
  const bars = days.map((d, i) => {
    const x = i * slot + (slot - bw) / 2;
    const hd = scale(d.delivered);
    const hf = scale(d.failed);
    const base = H - PAD_B;
    return html`<g><title>${d.day}: ${d.delivered} delivered, ${d.failed} failed</title>
<rect class="bar-ok" x="${x.toFixed(1)}" y="${(base - hd).toFixed(1)}" width="${bw.toFixed(1)}" height="${hd.toFixed(1)}"></rect>
<rect class="bar-bad" x="${x.toFixed(1)}" y="${(base - hd - hf).toFixed(1)}" width="${bw.toFixed(1)}" height="${hf.toFixed(1)}"></rect>
<text class="axis" x="${(i * slot + slot / 2).toFixed(1)}" y="${H - 6}" text-anchor="middle">${d.day.slice(8)}</text></g>`;
  });
  return html`<figure class="chart">
<svg viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title" focusable="false" data-testid="deliveries-chart">
<title id="chart-title">Deliveries per day, last ${days.length} days: ${total.delivered} delivered, ${total.failed} failed</title>
<line class="axis-line" x1="0" y1="${H - PAD_B}" x2="${W}" y2="${H - PAD_B}"></line>
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
