/** A followed shipment's NDR actions (docs/ndr-actions.md): the buttons, a confirmation step, the history. */
import type { ActionName } from "../../../domain/actions.ts";
import { maskConsignee } from "../../../domain/actions.ts";
import type { ShipmentAction } from "../../actions/model.ts";
import { fmtTime, html, type SafeHtml } from "../html.ts";
import { csrfField, layout, type Flash, type PageSession } from "./layout.ts";

const ACTION_LABEL: Record<ActionName, string> = {
  reattempt: "Ask for a re-attempt",
  defer_delivery: "Defer delivery to a date",
  update_consignee: "Correct the consignee's details",
  return_to_origin: "Return to origin (RTO)",
};

export interface ActionsPageData {
  courier: string;
  courierName: string;
  trackingNumber: string;
  state: string;
  reasonCode: string | null;
  available: ActionName[];
  history: ShipmentAction[];
}

const base = (d: Pick<ActionsPageData, "courier" | "trackingNumber">) =>
  `/dashboard/shipments/${encodeURIComponent(d.courier)}/${encodeURIComponent(d.trackingNumber)}/actions`;

function fieldsOf(a: ActionName): SafeHtml {
  if (a === "defer_delivery")
    return html`<div class="field"><label for="f-date">Deliver on</label><input id="f-date" name="deferred_date" type="date" required></div>`;
  if (a === "update_consignee")
    return html`<div class="field"><label for="f-phone">Phone</label><input id="f-phone" name="phone" type="tel" maxlength="20" autocomplete="off"></div>
<div class="field"><label for="f-name">Name</label><input id="f-name" name="name" maxlength="100" autocomplete="off"></div>
<div class="field"><label for="f-add">Address</label><input id="f-add" name="address" maxlength="300" autocomplete="off"></div>`;
  return html``;
}

function buttons(s: PageSession, d: ActionsPageData): SafeHtml {
  if (d.available.length === 0)
    return html`<p data-testid="no-actions">${d.courierName} documents no action API: actions cannot be sent for this courier.</p>`;
  return html`${d.available.map(
    (
      a,
    ) => html`<form method="post" action="${base(d)}/confirm" class="row" data-testid="action-${a}">${csrfField(s.csrfToken)}
<input type="hidden" name="action" value="${a}">${fieldsOf(a)}<button type="submit">${ACTION_LABEL[a]}…</button></form>`,
  )}`;
}

function history(h: ShipmentAction[]): SafeHtml {
  if (h.length === 0) return html`<p data-testid="no-history">No action asked yet.</p>`;
  return html`<div class="scroll"><table data-testid="action-history"><thead><tr><th scope="col">Asked</th><th scope="col">Action</th><th scope="col">Status</th><th scope="col">Courier reference</th><th scope="col">Details</th></tr></thead>
<tbody>${h.map(
    (
      a,
    ) => html`<tr data-action="${a.id}"><td data-label="Asked">${fmtTime(a.requested_at)}</td><td data-label="Action">${ACTION_LABEL[a.action]}</td>
<td data-label="Status"><span class="badge ${a.status === "accepted" ? "ok" : a.status === "requested" ? "" : "bad"}">${a.status}</span></td>
<td data-label="Courier reference" class="mono">${a.courier_reference ?? ""}</td>
<td data-label="Details">${[a.deferred_date ? `on ${a.deferred_date}` : "", ...Object.entries(a.consignee ?? {}).map(([k, v]) => `${k} ${v}`), a.reason ?? ""].filter(Boolean).join("; ")}</td></tr>`,
  )}</tbody></table></div>`;
}

/** The shipment's actions page. */
export function actionsPage(s: PageSession, d: ActionsPageData, flash?: Flash): SafeHtml {
  return layout({
    title: `Actions: ${d.courierName} ${d.trackingNumber}`,
    session: s,
    active: "shipments",
    flash,
    body: html`<section class="card" aria-labelledby="act-h"><h2 id="act-h">Act on this delivery</h2>
<p data-testid="act-state">${d.courierName} <span class="mono">${d.trackingNumber}</span>: <span class="badge">${d.state.replace(/_/g, " ")}</span>${d.reasonCode ? ` (${d.reasonCode.replace(/_/g, " ")})` : ""}</p>
<p class="hint">Each action asks the courier; it is checked first and confirmed on the next page. The courier's answer appears below.</p>
${buttons(s, d)}
</section>
<section class="card" aria-labelledby="hist-h"><h2 id="hist-h">Action history</h2>${history(d.history)}</section>
<p><a href="/dashboard/shipments?state=exception">Back to the shipments needing action</a></p>`,
  });
}

/** The confirmation step: what will be sent (consignee values masked), confirm or go back. */
export function confirmPage(
  s: PageSession,
  d: Pick<ActionsPageData, "courier" | "courierName" | "trackingNumber">,
  fields: { action: ActionName; deferred_date?: string; consignee?: Record<string, string> },
): SafeHtml {
  const shown = fields.consignee ? maskConsignee(fields.consignee) : {};
  return layout({
    title: "Confirm the action",
    session: s,
    active: "shipments",
    body: html`<section class="card" aria-labelledby="conf-h"><h2 id="conf-h">Confirm: ${ACTION_LABEL[fields.action]}</h2>
<p data-testid="confirm-text">This asks ${d.courierName} to act on <span class="mono">${d.trackingNumber}</span>${fields.deferred_date ? ` and deliver on ${fields.deferred_date}` : ""}${
      Object.keys(shown).length
        ? `, with ${Object.entries(shown)
            .map(([k, v]) => `${k} ${v}`)
            .join(", ")}`
        : ""
    }. It cannot be taken back.</p>
<form method="post" action="${base(d)}">${csrfField(s.csrfToken)}
<input type="hidden" name="action" value="${fields.action}">
${fields.deferred_date ? html`<input type="hidden" name="deferred_date" value="${fields.deferred_date}">` : ""}
${Object.entries(fields.consignee ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
<button type="submit" class="primary" data-testid="confirm">Confirm</button> <a href="${base(d)}">Cancel</a></form></section>`,
  });
}
