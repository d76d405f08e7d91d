/** The webhook page's Redeliver button (per delivery) and Recover form (docs/events.md). */
import type { SafeHtml } from "../html.ts";
import { html } from "../html.ts";
import { csrfField, type PageSession } from "./layout.ts";

/** Windows the Recover form offers, in hours (the API allows any instant within 30 days). */
export const RECOVER_WINDOWS: readonly { hours: number; label: string }[] = [
  { hours: 1, label: "the last hour" },
  { hours: 24, label: "the last 24 hours" },
  { hours: 24 * 7, label: "the last 7 days" },
  { hours: 24 * 30, label: "the last 30 days" },
];

/** A one-button form that queues the delivery's event again. */
export function redeliverButton(s: PageSession, webhookId: string, deliveryId: string): SafeHtml {
  return html`<form method="post" action="/dashboard/webhooks/${webhookId}/deliveries/${deliveryId}/redeliver" class="inline">${csrfField(s.csrfToken)}<button type="submit" class="secondary">Redeliver<span class="sr-only"> delivery ${deliveryId}</span></button></form>`;
}

/** Queue again every abandoned or dropped delivery of a window. */
export function recoverForm(s: PageSession, webhookId: string): SafeHtml {
  return html`<section class="card" aria-labelledby="recover-h"><h2 id="recover-h">Recover failed deliveries</h2>
<form method="post" action="/dashboard/webhooks/${webhookId}/recover">${csrfField(s.csrfToken)}
<p class="hint">Sends again every delivery that ended abandoned (six failed attempts) or dropped (address check), once per event, built from the freshest data.</p>
<div class="field"><label for="recover-window">Failed during</label>
<select id="recover-window" name="hours">${RECOVER_WINDOWS.map((w) => html`<option value="${String(w.hours)}"${w.hours === 24 ? html` selected` : ""}>${w.label}</option>`)}</select></div>
<p class="actions"><button type="submit" class="primary">Recover</button></p></form></section>`;
}
