/** Webhook pages: list, create/edit form, detail with chart and recent deliveries, secret reveal and confirmations. */
import { DEACTIVATE_AFTER_FAILURES as DEACTIVATE_AFTER } from "../../../domain/delivery.ts";
import { WEBHOOK_EVENT_TYPES } from "../../../domain/events.ts";
import type { listDeliveries, webhookView } from "../../webhooks/service.ts";
import { fmtTime, html, type SafeHtml } from "../html.ts";
import type { DeliveryShipment } from "../delivery-shipments.ts";
import type { DayCount } from "../service.ts";
import { deliveriesChart } from "./chart.ts";
import { recoverForm, redeliverButton } from "./replay.ts";
import { midTrunc } from "./truncate.ts";
import { csrfField, layout, type Flash, type PageSession } from "./layout.ts";
import {
  auditButton,
  auditReport,
  deliveriesFilter,
  headersFieldset,
  type AuditShown,
  type DeliveryFilterForm,
  type HeaderRow,
} from "./webhook-tools.ts";

export type WebhookView = ReturnType<typeof webhookView>;
/** A delivery with the shipment it was about (absent for rows that have neither a shipment nor a sample). */
export type DeliveryView = Awaited<ReturnType<typeof listDeliveries>>["deliveries"][number] & {
  shipment?: DeliveryShipment;
};

/** The failure count as shown: the one that deactivated it, or how far an active live webhook is from that. */
function failureText(w: Pick<WebhookView, "failure_count" | "status" | "mode">): string {
  if (w.status === "deactivated") return `${Math.min(w.failure_count, DEACTIVATE_AFTER)} (deactivated)`;
  return w.mode === "live" ? `${w.failure_count} (${DEACTIVATE_AFTER} deactivates)` : String(w.failure_count);
}

const statusBadge = (w: WebhookView) =>
  w.status === "active" ? html`<span class="badge ok">active</span>` : html`<span class="badge bad">deactivated</span>`;
const modeBadge = (w: WebhookView) => html`<span class="badge ${w.mode === "live" ? "live" : "test"}">${w.mode}</span>`;

/** The account's webhooks with mode, status, events and failure count. */
export function webhooksListPage(
  s: PageSession,
  list: WebhookView[],
  opts: { liveAllowed: boolean; flash?: Flash },
): SafeHtml {
  return layout({
    title: "Webhooks",
    session: s,
    active: "webhooks",
    flash: opts.flash,
    body: html`<p class="actions"><a class="button primary" href="/dashboard/webhooks/new">Add a webhook</a>
<a class="button secondary" href="/dashboard/webhooks/rotate-secret">Rotate signing secret</a></p>
${opts.liveAllowed ? "" : html`<p class="hint">Your plan has test webhooks only. <a href="/dashboard/billing">Upgrade to Growth or Business</a> for live webhooks.</p>`}
<section class="card" aria-labelledby="wh-h"><h2 id="wh-h">${list.length} webhook${list.length === 1 ? "" : "s"}</h2>
${
  list.length === 0
    ? html`<p>No webhooks yet.</p>`
    : html`<div class="scroll"><table>
<thead><tr><th scope="col">URL</th><th scope="col">Mode</th><th scope="col">Status</th><th scope="col">Events</th><th scope="col">Failures in a row</th></tr></thead>
<tbody>${list.map(
        (w) => html`<tr data-webhook-id="${w.id}">
  <td data-label=""><a href="/dashboard/webhooks/${w.id}" class="url">${midTrunc(w.url)}</a>${w.description ? html`<div class="hint">${w.description}</div>` : ""}</td>
  <td data-label="Mode">${modeBadge(w)}</td><td data-label="Status">${statusBadge(w)}</td><td data-label="Events">${w.events.join(", ")}</td>
  <td data-label="Failures in a row" data-testid="failure-count">${failureText(w)}</td></tr>`,
      )}</tbody>
</table></div>`
}
</section>`,
  });
}

export interface WebhookFormValues {
  url: string;
  description: string;
  mode: string;
  events: string[];
  /** Custom header names (values are never shown back; `masked` for stored ones). */
  headers: HeaderRow[];
}

/** Create (no `id`) or edit form. `errors` by field name (`url`, `events`, `mode`, `description`, `headers`, `form`). */
export function webhookFormPage(
  s: PageSession,
  v: WebhookFormValues,
  opts: { id?: string; errors?: Record<string, string>; liveAllowed: boolean },
): SafeHtml {
  const e = opts.errors ?? {};
  const err = (k: string) => (e[k] ? html`<p class="field-error" id="${k}-error">${e[k]}</p>` : "");
  const inv = (k: string) => (e[k] ? html` aria-invalid="true" aria-describedby="${k}-error"` : "");
  return layout({
    title: opts.id ? "Edit webhook" : "Add a webhook",
    session: s,
    active: "webhooks",
    flash: e.form ? { kind: "error", text: e.form } : undefined,
    body: html`<form method="post" action="${opts.id ? `/dashboard/webhooks/${opts.id}` : "/dashboard/webhooks"}" class="card" novalidate>${csrfField(s.csrfToken)}
<div class="field"><label for="url">Endpoint URL (https)</label>${err("url")}
<input id="url" name="url" type="url" inputmode="url" required maxlength="2048" value="${v.url}" placeholder="https://example.com/hooks/courier"${inv("url")}></div>
<div class="field"><label for="description">Description (optional)</label>${err("description")}
<input id="description" name="description" maxlength="500" value="${v.description}"${inv("description")}></div>
<fieldset${inv("mode")}><legend>Mode</legend>${err("mode")}
<label class="choice"><input type="radio" name="mode" value="test"${v.mode !== "live" ? html` checked` : ""}> Test — receives only test fires (all plans)</label>
<label class="choice"><input type="radio" name="mode" value="live"${v.mode === "live" ? html` checked` : ""}> Live — receives real shipment events${opts.liveAllowed ? "" : html` (needs Growth or Business: <a href="/dashboard/billing">upgrade</a>)`}</label>
</fieldset>
<fieldset${inv("events")}><legend>Events</legend>${err("events")}
${WEBHOOK_EVENT_TYPES.map((ev) => html`<label class="choice"><input type="checkbox" name="events" value="${ev}"${v.events.includes(ev) ? html` checked` : ""}> <code>${ev}</code></label>`)}
</fieldset>
${headersFieldset(v.headers, e.headers)}
<p class="actions"><button type="submit" class="primary">${opts.id ? "Save changes" : "Create webhook"}</button> <a href="${opts.id ? `/dashboard/webhooks/${opts.id}` : "/dashboard/webhooks"}">Cancel</a></p>
</form>`,
  });
}

/** The signing secret, shown once (after the first create, or a rotation). */
export function secretPage(s: PageSession, secret: string, opts: { webhookId?: string; rotated: boolean }): SafeHtml {
  return layout({
    title: opts.rotated ? "New signing secret" : "Webhook created",
    session: s,
    active: "webhooks",
    body: html`<section class="card reveal" aria-labelledby="secret-h"><h2 id="secret-h">Your signing secret</h2>
<p><strong>Copy it now: it is shown only once.</strong> It signs every delivery to all your webhooks (<code>X-Service-Signature: sha256=&lt;hex HMAC-SHA256 of the raw body&gt;</code>).${opts.rotated ? " Deliveries from now on use the new secret; accept both secrets for at least 15 minutes." : ""}</p>
<div class="copy-row"><input id="secret" class="mono" readonly value="${secret}" aria-label="Signing secret" data-testid="signing-secret"><button type="button" data-copy="secret">Copy</button></div>
<p class="copied" aria-live="polite" data-copied-for="secret"></p>
<p><a class="button primary" href="${opts.webhookId ? `/dashboard/webhooks/${opts.webhookId}` : "/dashboard/webhooks"}">I have saved it — continue</a></p></section>`,
  });
}

/** A confirmation step for a destructive action (rotate secret, delete webhook). */
export function confirmPage(
  s: PageSession,
  o: { title: string; text: string; action: string; button: string; cancel: string },
): SafeHtml {
  return layout({
    title: o.title,
    session: s,
    active: "webhooks",
    body: html`<form method="post" action="${o.action}" class="card narrow">${csrfField(s.csrfToken)}<p>${o.text}</p>
<p class="actions"><button type="submit" class="danger">${o.button}</button> <a href="${o.cancel}">Cancel</a></p></form>`,
  });
}

function resultCell(d: DeliveryView): SafeHtml {
  if (d.last_status_code !== null)
    return html`<span class="${d.last_status_code >= 200 && d.last_status_code < 300 ? "good" : "bad"}">HTTP ${d.last_status_code}</span>`;
  if (d.last_error) return html`<span class="bad">${d.last_error}</span>`;
  return html`<span>—</span>`;
}

function deliveryRow(d: DeliveryView, again: SafeHtml): SafeHtml {
  const last = d.attempt_log[0];
  return html`<tr data-delivery-id="${d.id}">
<td data-label="Time">${fmtTime(last?.started_at ?? d.created_at)}</td>
<td data-label="Sequence" data-testid="delivery-sequence">${d.sequence === null ? "—" : String(d.sequence)}</td>
<td data-label="Event"><code>${d.event}</code>${d.mode === "test" ? html` <span class="badge test">test</span>` : ""}</td>
<td data-label="Tracking number" data-testid="delivery-shipment">${d.shipment ? html`<span class="mono">${d.shipment.trackingNumber}</span><div class="hint">${d.shipment.courier}</div>` : "—"}</td>
<td data-label="Attempts">${d.attempts}</td>
<td data-label="Result">${resultCell(d)} <span class="state">${d.state}</span>${d.next_attempt_at ? html`<div class="hint">next try ${fmtTime(d.next_attempt_at)}</div>` : ""}</td>
<td data-label="Duration">${last ? `${last.duration_ms} ms` : "—"}</td>
<td data-label="" class="log">${
    d.attempt_log.length
      ? html`<details><summary>Attempts<span class="sr-only"> of delivery ${d.id}</span></summary><ol class="attempts">${d.attempt_log.map(
          (a) => html`<li>
  <div>Attempt ${a.attempt} at ${fmtTime(a.started_at)} · ${a.duration_ms} ms · ${a.status_code !== null ? `HTTP ${a.status_code}` : (a.error ?? "no response")}</div>
  <div class="url">${midTrunc(a.url, 24)}</div>${a.response_snippet ? html`<pre>${a.response_snippet}</pre>` : ""}</li>`,
        )}</ol></details>`
      : "—"
  }</td><td data-label="">${again}</td></tr>`;
}

/** One webhook: facts, actions, an audit report, 14-day chart and the last 50 deliveries (filtered) with their attempts. */
export function webhookDetailPage(
  s: PageSession,
  w: WebhookView,
  days: DayCount[],
  recent: DeliveryView[],
  flash?: Flash,
  more: { filter?: DeliveryFilterForm; audit?: AuditShown[] } = {},
): SafeHtml {
  const filtered = Object.values(more.filter ?? {}).some(Boolean);
  return layout({
    title: "Webhook",
    session: s,
    active: "webhooks",
    flash,
    body: html`<section class="card" aria-labelledby="facts-h"><h2 id="facts-h" class="url">${w.url}</h2>
<dl class="facts">
<div><dt>Mode</dt><dd>${modeBadge(w)}</dd></div>
<div><dt>Status</dt><dd data-testid="webhook-status">${statusBadge(w)}</dd></div>
<div><dt>Failed deliveries in a row</dt><dd data-testid="failure-count">${failureText(w)}</dd></div>
<div><dt>Events</dt><dd>${w.events.join(", ")}</dd></div>
<div><dt>Description</dt><dd data-testid="webhook-description">${w.description ?? "—"}</dd></div>
<div><dt>Created</dt><dd>${fmtTime(w.created_at)}</dd></div>
<div><dt>Custom headers</dt><dd data-testid="webhook-headers">${Object.keys(w.headers).length ? Object.entries(w.headers).map(([n, v]) => html`<div><code>${n}</code>: ${v}</div>`) : "—"}</dd></div>
</dl>
${
  w.status === "deactivated"
    ? html`<div class="flash flash-error"><p>This webhook was deactivated after 20 failed deliveries in a row. Fix the endpoint, then reactivate it: the failure count restarts at 0.</p>
<form method="post" action="/dashboard/webhooks/${w.id}/reactivate">${csrfField(s.csrfToken)}<button type="submit" class="primary">Reactivate</button></form></div>`
    : ""
}
<div class="actions">
${w.mode === "test" ? html`<form method="post" action="/dashboard/webhooks/${w.id}/test" class="inline">${csrfField(s.csrfToken)}<button type="submit" class="primary">Send a test delivery</button></form>` : ""}
${auditButton(s, w.id)}
<a class="button secondary" href="/dashboard/webhooks/${w.id}/edit">Edit</a>
<a class="button danger" href="/dashboard/webhooks/${w.id}/delete">Delete</a>
</div></section>
${more.audit ? auditReport(more.audit) : ""}
<section class="card" aria-labelledby="chart-h"><h2 id="chart-h">Deliveries, last 14 days</h2>${deliveriesChart(days)}</section>
<section class="card" aria-labelledby="recent-h"><h2 id="recent-h">Recent deliveries</h2>
${deliveriesFilter(w.id, more.filter ?? {})}
${
  recent.length === 0
    ? html`<p>${filtered ? "No deliveries match these filters." : html`No deliveries yet.${w.mode === "test" ? " Send a test delivery to see one here." : ""}`}</p>`
    : html`<p class="hint">${recent.length === 1 ? "The only delivery so far." : `The last ${recent.length} deliveries, newest first.`}</p><div class="scroll"><table class="deliveries">
<thead><tr><th scope="col">Time</th><th scope="col">Sequence</th><th scope="col">Event</th><th scope="col">Tracking number</th><th scope="col">Attempts</th><th scope="col">Result</th><th scope="col">Duration</th><th scope="col" class="log">Details</th><th scope="col">Send again</th></tr></thead>
<tbody>${recent.map((d) => deliveryRow(d, redeliverButton(s, w.id, d.id)))}</tbody></table></div>`
}
</section>
${recoverForm(s, w.id)}`,
  });
}
