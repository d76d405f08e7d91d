/** The merchant's shipments page: search, filters, one page of the list, follow from a list or CSV, CSV export. */
import { REASON_CODES } from "../../../domain/ndr.ts";
import { RECHECKS_PER_DAY } from "../../../domain/following.ts";
import { WEBHOOK_SPELLING } from "../../../domain/states.ts";
import { COURIERS } from "../../couriers/catalogue.ts";
import { MAX_SHIPMENTS_PER_CALL } from "../../shipments/model.ts";
import { fmtTime, html, type SafeHtml } from "../html.ts";
import type { ImportResult, ListedShipment, ShipmentFilters } from "../shipments.ts";
import { csrfField, layout, type PageSession } from "./layout.ts";
import { midTrunc } from "./truncate.ts";
import { predictedCell, stalledBadge } from "./predictions.ts";

const words = (s: string) => s.replace(/_/g, " ");

/** `?q=…&state=…` of the non-empty filters, plus `extra`. */
function filterQuery(f: ShipmentFilters, extra: Record<string, string> = {}): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...f, ...extra })) if (v) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : "";
}

function select(id: string, label: string, value: string, options: readonly (readonly [string, string])[]): SafeHtml {
  return html`<div class="field"><label for="${id}">${label}</label><select id="${id}" name="${id.slice(5)}">
<option value="">Any</option>${options.map(([v, text]) => html`<option value="${v}"${v === value ? " selected" : ""}>${text}</option>`)}</select></div>`;
}

function filtersForm(f: ShipmentFilters): SafeHtml {
  return html`<form method="get" action="/dashboard/shipments" class="row filters" role="search" aria-label="Shipments">
<div class="field"><label for="ship-q">AWB or reference</label><input id="ship-q" name="q" type="search" maxlength="128" value="${f.q}" placeholder="e.g. 50112345670 or your order id"></div>
${select(
  "ship-state",
  "State",
  f.state,
  Object.values(WEBHOOK_SPELLING).map((s) => [s, words(s)] as const),
)}
${select(
  "ship-courier",
  "Courier",
  f.courier,
  COURIERS.map((c) => [c.slug, c.name] as const),
)}
${select(
  "ship-reason",
  "Failed-attempt reason",
  f.reason,
  REASON_CODES.map((r) => [r, words(r)] as const),
)}
${select("ship-stalled", "Stalled", f.stalled, [["true", "Stalled only"]])}
<div class="actions"><button type="submit" class="primary">Search</button><a href="/dashboard/shipments">Clear</a></div>
</form>`;
}

function list(rows: ListedShipment[], f: ShipmentFilters, next: string | null): SafeHtml {
  const any = Object.values(f).some(Boolean);
  if (rows.length === 0)
    return html`<p data-testid="no-shipments">${any ? "No followed shipment matches these filters." : "No followed shipments yet."}</p>`;
  return html`<div class="scroll"><table data-testid="shipments">
<thead><tr><th scope="col">Courier</th><th scope="col">AWB</th><th scope="col">Reference</th><th scope="col">State</th><th scope="col">Latest status</th><th scope="col">Predicted delivery</th><th scope="col">Last checkpoint</th><th scope="col">Next check</th></tr></thead>
<tbody>${rows.map(
    (r) => html`<tr data-awb="${r.tracking_number}">
<td data-label="Courier">${r.courier}</td><td data-label="AWB" class="mono">${midTrunc(r.tracking_number)}</td><td data-label="Reference" class="url">${r.reference ?? ""}</td>
<td data-label="State"><span class="badge state-${r.status}">${words(r.status)}</span>${r.reason_code ? html` <span class="state">(${words(r.reason_code)})</span>` : ""}${stalledBadge(r)}${r.status === "exception" ? html` <a href="/dashboard/shipments/${r.courier}/${r.tracking_number}/actions" data-testid="act-link">Act</a>` : ""}</td>
<td data-label="Latest status">${r.most_recent_status}</td><td data-label="Predicted delivery">${predictedCell({ predictedDate: r.predicted_delivery?.date ?? null })}</td><td data-label="Last checkpoint">${fmtTime(r.last_checkpoint_at)}</td><td data-label="Next check">${r.next_check_at ? fmtTime(r.next_check_at) : "not scheduled"}</td></tr>`,
  )}</tbody>
</table></div>
${next ? html`<p><a href="/dashboard/shipments${filterQuery(f, { cursor: next })}" rel="next">Next ${rows.length} shipments</a></p>` : ""}`;
}

function followForm(s: PageSession, error?: string): SafeHtml {
  return html`<section class="card" aria-labelledby="follow-h"><h2 id="follow-h">Follow shipments</h2>
<p class="hint">Up to ${MAX_SHIPMENTS_PER_CALL} at a time, as <code>POST /v1/shipments</code>: one per line, <code>AWB</code>, <code>courier,AWB</code> or <code>courier,AWB,reference</code>, or a CSV file with a header row (<code>courier,tracking_number,reference</code>; an export works). Each new shipment counts as one tracking request.</p>
${error ? html`<p class="field-error" id="follow-error" role="alert">${error}</p>` : ""}
<form method="post" action="/dashboard/shipments/follow" enctype="multipart/form-data">${csrfField(s.csrfToken)}
<div class="field"><label for="follow-list">Paste a list</label><textarea id="follow-list" name="list" rows="5" placeholder="delhivery,1234567890120,ORDER-1001"${error ? html` aria-describedby="follow-error"` : ""}></textarea></div>
<div class="field"><label for="follow-file">or upload a CSV file (up to 64 KiB)</label><input id="follow-file" name="file" type="file" accept=".csv,text/csv,text/plain"></div>
<button type="submit" class="primary">Follow</button>
</form></section>`;
}

function results(rs: ImportResult[]): SafeHtml {
  const n = (k: string) => rs.filter((r) => r.result === k).length;
  const label = (r: ImportResult) =>
    r.result === "accepted" ? (r.already_followed ? "already followed" : "followed") : words(r.result);
  return html`<section class="card" aria-labelledby="results-h"><h2 id="results-h">Results</h2>
<p role="status" data-testid="follow-summary">${n("accepted")} accepted, ${n("invalid")} invalid, ${n("quota_exceeded")} over the quota.</p>
<div class="scroll"><table data-testid="follow-results"><thead><tr><th scope="col">Line</th><th scope="col">Courier</th><th scope="col">AWB</th><th scope="col">Result</th><th scope="col">Why</th></tr></thead>
<tbody>${rs.map(
    (
      r,
    ) => html`<tr><td data-label="Line">${r.line}</td><td data-label="Courier">${r.courier}</td><td data-label="AWB" class="mono">${midTrunc(r.tracking_number)}</td>
<td data-label="Result"><span class="badge ${r.result === "accepted" ? "ok" : "bad"}">${label(r)}</span></td><td data-label="Why">${r.message ?? ""}</td></tr>`,
  )}</tbody></table></div></section>`;
}

/** The page; `opts.results` after a follow, `opts.error` when the list could not be read. */
export function shipmentsPage(
  s: PageSession,
  d: { rows: ListedShipment[]; next: string | null; filters: ShipmentFilters },
  opts: { results?: ImportResult[]; error?: string } = {},
): SafeHtml {
  return layout({
    title: "Tracked shipments",
    session: s,
    active: "shipments",
    body: html`${opts.results ? results(opts.results) : ""}
<section class="card" aria-labelledby="ship-h"><h2 id="ship-h">Followed shipments</h2>
<p class="hint">A successful <code>GET /v1/track</code> or <code>POST /v1/shipments</code> makes your account follow the shipment; the service re-checks it with the courier about ${RECHECKS_PER_DAY} times a day and stops at delivered, returned or cancelled.</p>
${filtersForm(d.filters)}
<p><a class="button" href="/dashboard/shipments/export.csv${filterQuery(d.filters)}" download>Export these as CSV</a></p>
${list(d.rows, d.filters, d.next)}
</section>
${followForm(s, opts.error)}`,
  });
}
