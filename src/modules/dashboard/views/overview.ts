/**
 * The dashboard's home: this month's usage against the quota with the month-end projection (an SVG drawn on the
 * server, with its numbers as text), delivery health across all webhooks, and followed shipments by state.
 */
import { fmtInt, html, type SafeHtml } from "../html.ts";
import type { DeliveryHealth, Outcomes } from "../overview.ts";
import { usageBlock, type UsageInfo } from "./account.ts";
import { layout, type Flash, type PageSession } from "./layout.ts";
import { midTrunc } from "./truncate.ts";

export interface OverviewData {
  usage: UsageInfo;
  projected: number;
  health: DeliveryHealth;
  states: { state: string; n: number }[];
  counts: { keys: number; webhooks: number; deactivated: number; shipments: number };
}

const W = 700;

/** Used, projected and quota as three horizontal bars on one scale; the figure's caption says the same in words. */
function usageChart(used: number, projected: number, quota: number): SafeHtml {
  const max = Math.max(quota, projected, 1);
  const x = (n: number) => ((n / max) * (W - 8)).toFixed(1);
  const over = projected > quota;
  return html`<figure class="chart">
<svg viewBox="0 0 ${W} 92" role="img" aria-labelledby="usage-chart-title" focusable="false" data-testid="usage-chart">
<title id="usage-chart-title">Used ${fmtInt(used)}, projected ${fmtInt(projected)} by month end, quota ${fmtInt(quota)}</title>
<rect class="bar-ok" x="0" y="4" width="${x(used)}" height="22"></rect>
<rect class="${over ? "bar-bad" : "bar-proj"}" x="0" y="34" width="${x(projected)}" height="22"></rect>
<line class="quota-line" x1="${x(quota)}" y1="0" x2="${x(quota)}" y2="62"></line>
<text class="axis" x="4" y="80">0</text><text class="axis" x="${x(quota)}" y="80" text-anchor="end">quota ${fmtInt(quota)}</text>
</svg>
<figcaption><span class="key key-ok" aria-hidden="true"></span> used so far: <strong>${fmtInt(used)}</strong>
· <span class="key ${over ? "key-bad" : "key-proj"}" aria-hidden="true"></span> projected by month end at this pace:
<strong data-testid="usage-projected">${fmtInt(projected)}</strong>${over ? html` — <strong class="bad">over the quota</strong>` : ""}</figcaption>
</figure>`;
}

const rate = (o: Outcomes) => (o.delivered + o.failed === 0 ? "no finished deliveries" : `${Math.round((o.delivered / (o.delivered + o.failed)) * 1000) / 10}% delivered`);

function healthCard(h: DeliveryHealth): SafeHtml {
  return html`<section class="card" aria-labelledby="health-h"><h2 id="health-h">Webhook deliveries</h2>
<dl class="facts">
<div><dt>Last 7 days</dt><dd data-testid="success-7">${rate(h.d7)} (${fmtInt(h.d7.delivered)} delivered, ${fmtInt(h.d7.failed)} failed)</dd></div>
<div><dt>Last 30 days</dt><dd data-testid="success-30">${rate(h.d30)} (${fmtInt(h.d30.delivered)} delivered, ${fmtInt(h.d30.failed)} failed)</dd></div>
</dl>
${h.failing.length === 0
  ? html`<p>No webhook failed a delivery in the last 7 days.</p>`
  : html`<h3 class="sub">Failing in the last 7 days</h3><ul class="glance" data-testid="failing-webhooks">${h.failing.map((w) => html`<li>
<a href="/dashboard/webhooks/${w.id}" class="url">${midTrunc(w.url)}</a>: ${fmtInt(w.failed)} failed, ${fmtInt(w.delivered)} delivered${w.status === "deactivated" ? html` — <strong class="bad">deactivated</strong>` : ""}</li>`)}</ul>`}
</section>`;
}

function statesCard(states: OverviewData["states"], total: number): SafeHtml {
  return html`<section class="card" aria-labelledby="states-h"><h2 id="states-h">Followed shipments by state</h2>
${states.length === 0
  ? html`<p>No followed shipments yet. A successful <code>GET /v1/track</code> follows one.</p>`
  : html`<ul class="states" data-testid="shipment-states">${states.map((s) => html`<li><a href="/dashboard/shipments?state=${s.state}"><strong>${fmtInt(s.n)}</strong> ${s.state.replace(/_/g, " ")}</a></li>`)}</ul>
<p class="hint">${fmtInt(total)} in all. <a href="/dashboard/shipments">See the list</a>.</p>`}
</section>`;
}

/** Landing page after sign-in. */
export function overviewPage(s: PageSession, d: OverviewData, flash?: Flash): SafeHtml {
  const c = d.counts;
  return layout({
    title: "Overview",
    session: s,
    active: "overview",
    flash,
    body: html`${usageBlock(d.usage)}
<section class="card" aria-labelledby="proj-h"><h2 id="proj-h">Usage against the quota</h2>${usageChart(d.usage.used, d.projected, d.usage.plan.monthly_quota)}</section>
${healthCard(d.health)}
${statesCard(d.states, c.shipments)}
<section class="card" aria-labelledby="glance-h">
  <h2 id="glance-h">At a glance</h2>
  <ul class="glance">
    <li><a href="/dashboard/keys">${c.keys} active API key${c.keys === 1 ? "" : "s"}</a>${c.keys === 0 ? html` — <strong>create one to start calling the API</strong>` : ""}</li>
    <li><a href="/dashboard/webhooks">${c.webhooks} webhook${c.webhooks === 1 ? "" : "s"}</a>${c.deactivated ? html` — <strong class="bad">${c.deactivated} deactivated</strong>` : ""}</li>
    <li><a href="/dashboard/shipments">${c.shipments} followed shipment${c.shipments === 1 ? "" : "s"}</a></li>
  </ul>
</section>`,
  });
}
