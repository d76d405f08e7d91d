/** The dashboard's home: month usage and projection, delivery health, followed shipments by state. */
import { fmtInt, html, type SafeHtml } from "../html.ts";
import type { DayUsage } from "../../accounts/quota-days.ts";
import type { DeliveryHealth, NeedsAction, Outcomes } from "../overview.ts";
import type { DayCount } from "../service.ts";
import { usageBlock, type UsageInfo } from "./account.ts";
import { layout, type Flash, type PageSession } from "./layout.ts";
import { midTrunc } from "./truncate.ts";
import { successByDayChart } from "./success-chart.ts";
import { usageByDayChart } from "./usage-chart.ts";

export interface OverviewData {
  usage: UsageInfo;
  projected: number;
  days: DayUsage[];
  /** Days in this UTC month. */
  monthDays: number;
  action: NeedsAction;
  health: DeliveryHealth;
  /** Finished deliveries per UTC day, oldest first ({@link SUCCESS_CHART_DAYS} days), across all webhooks. */
  success: DayCount[];
  states: { state: string; n: number }[];
  counts: { keys: number; webhooks: number; deactivated: number; shipments: number };
}

const rate = (o: Outcomes) =>
  o.delivered + o.failed === 0
    ? "no finished deliveries"
    : `${Math.round((o.delivered / (o.delivered + o.failed)) * 1000) / 10}% delivered`;

/** Days of the overview's delivery-success chart: the 30-day rate's window, by UTC day. */
export const SUCCESS_CHART_DAYS = 30;

function healthCard(h: DeliveryHealth, days: DayCount[]): SafeHtml {
  return html`<section class="card" aria-labelledby="health-h"><h2 id="health-h">Webhook deliveries</h2>
<dl class="facts">
<div><dt>Last 7 days</dt><dd data-testid="success-7">${rate(h.d7)} (${fmtInt(h.d7.delivered)} delivered, ${fmtInt(h.d7.failed)} failed)</dd></div>
<div><dt>Last 30 days</dt><dd data-testid="success-30">${rate(h.d30)} (${fmtInt(h.d30.delivered)} delivered, ${fmtInt(h.d30.failed)} failed)</dd></div>
</dl>
<h3 class="sub">Delivery success by day, last ${SUCCESS_CHART_DAYS} days</h3>
${successByDayChart(days)}
${
  h.failing.length === 0
    ? html`<p>No webhook failed a delivery in the last 7 days.</p>`
    : html`<h3 class="sub">Failing in the last 7 days</h3><ul class="glance" data-testid="failing-webhooks">${h.failing.map(
        (w) => html`<li>
<a href="/dashboard/webhooks/${w.id}" class="url">${midTrunc(w.url)}</a>: ${fmtInt(w.failed)} failed, ${fmtInt(w.delivered)} delivered${w.status === "deactivated" ? html` — <strong class="bad">deactivated</strong>` : ""}</li>`,
      )}</ul>`
}
</section>`;
}

function statesCard(states: OverviewData["states"], total: number): SafeHtml {
  return html`<section class="card" aria-labelledby="states-h"><h2 id="states-h">Followed shipments by state</h2>
${
  states.length === 0
    ? html`<p>No followed shipments yet. A successful <code>GET /v1/track</code> follows one.</p>`
    : html`<ul class="states" data-testid="shipment-states">${states.map((s) => html`<li><a href="/dashboard/shipments?state=${s.state}"><strong>${fmtInt(s.n)}</strong> ${s.state.replace(/_/g, " ")}</a></li>`)}</ul>
<p class="hint">${fmtInt(total)} in all. <a href="/dashboard/shipments">See the list</a>.</p>`
}
</section>`;
}

function actionCard(a: NeedsAction): SafeHtml {
  const row = (href: string | null, n: number, text: string, id: string) =>
    html`<li data-testid="${id}">${href && n > 0 ? html`<a href="${href}"><strong>${fmtInt(n)}</strong> ${text}</a>` : html`<strong>${fmtInt(n)}</strong> ${text}`}</li>`;
  const failed = a.reasons.reduce((t, r) => t + r.n, 0);
  return html`<section class="card" aria-labelledby="action-h"><h2 id="action-h">Needs action</h2>
<h3 class="sub">Failed delivery attempts by reason (${fmtInt(failed)})</h3>
${
  a.reasons.length === 0
    ? html`<p>No followed shipment is held on a failed attempt.</p>`
    : html`<ul class="states" data-testid="action-reasons">${a.reasons.map((r) => row(`/dashboard/shipments?state=exception&reason=${r.reason}`, r.n, r.reason.replace(/_/g, " "), `reason-${r.reason}`))}</ul>`
}
<p class="hint" data-testid="action-hint">Open a failed shipment's <a href="/dashboard/shipments?state=exception">Act</a> link to ask the courier for a re-attempt, a later date, corrected details or a return, and to see what was asked.</p>
<ul class="glance">
${row("/dashboard/shipments?state=returned", a.returned, "returned to origin (RTO)", "action-returned")}
${row("/dashboard/shipments?stalled=true", a.stalled, "stalled (no courier update for longer than usual)", "action-stalled")}
</ul>
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
<section class="card" aria-labelledby="proj-h"><h2 id="proj-h">Usage by day against the quota</h2>${usageByDayChart(d.days, d.usage.plan.monthly_quota, d.projected, d.monthDays)}</section>
${actionCard(d.action)}
${healthCard(d.health, d.success)}
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
