/** The webhook pages' headers editor, deliveries filter and receiver audit report (docs/webhooks.md). */
import { WEBHOOK_EVENT_TYPES } from "../../../domain/events.ts";
import { DELIVERY_STATUSES } from "../../webhooks/model.ts";
import { AUDIT_CASES, type AuditCase } from "../../webhooks/audit.ts";
import { MAX_CUSTOM_HEADERS } from "../../webhooks/headers.ts";
import { html, type SafeHtml } from "../html.ts";
import { csrfField, type PageSession } from "./layout.ts";

/** One row of the headers editor: `masked` is the stored value as the API shows it (editing only). */
export interface HeaderRow {
  name: string;
  masked?: string;
}

/** Up to five name/value rows; a stored value shows masked and stays when its field is left empty. */
export function headersFieldset(rows: HeaderRow[], error?: string): SafeHtml {
  const all = Array.from({ length: MAX_CUSTOM_HEADERS }, (_, i) => rows[i] ?? { name: "" });
  return html`<fieldset${error ? html` aria-invalid="true" aria-describedby="headers-error"` : ""}><legend>Custom headers (optional, up to ${String(MAX_CUSTOM_HEADERS)})</legend>
${error ? html`<p class="field-error" id="headers-error">${error}</p>` : ""}
<p class="hint" id="headers-hint">Sent with every delivery, e.g. <code>Authorization</code> for your gateway. Values are stored encrypted and shown masked: leave a value empty to keep the saved one; clear a name to remove that header.</p>
${all.map(
  (r, i) => html`<div class="row header-row">
<div class="field"><label for="header-name-${String(i)}">Header ${String(i + 1)} name</label><input id="header-name-${String(i)}" name="header_name" maxlength="100" value="${r.name}" autocomplete="off" spellcheck="false" aria-describedby="headers-hint"></div>
<div class="field"><label for="header-value-${String(i)}">Header ${String(i + 1)} value</label><input id="header-value-${String(i)}" name="header_value" maxlength="1000" value="" autocomplete="off" spellcheck="false" placeholder="${r.masked ?? ""}"></div>
</div>`,
)}
</fieldset>`;
}

/** The deliveries filter as the detail page applies it: dates are UTC days (YYYY-MM-DD), `until` inclusive. */
export interface DeliveryFilterForm {
  status?: (typeof DELIVERY_STATUSES)[number];
  event_type?: (typeof WEBHOOK_EVENT_TYPES)[number];
  since?: string;
  until?: string;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const validDay = (v: string | undefined) =>
  v && DAY.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) ? v : undefined;

/** The filter from the page's query; unknown values are left out (the form shows what was applied). */
export function deliveryFilterOf(q: Record<string, string | undefined>): DeliveryFilterForm {
  return {
    status: DELIVERY_STATUSES.find((s) => s === q.status),
    event_type: WEBHOOK_EVENT_TYPES.find((e) => e === q.event_type),
    since: validDay(q.since),
    until: validDay(q.until),
  };
}

/** The form (GET, so a filtered view can be bookmarked). */
export function deliveriesFilter(webhookId: string, f: DeliveryFilterForm): SafeHtml {
  const opt = (v: string, cur: string | undefined, label = v) =>
    html`<option value="${v}"${cur === v ? html` selected` : ""}>${label}</option>`;
  return html`<form method="get" action="/dashboard/webhooks/${webhookId}" class="row filters" aria-label="Filter deliveries">
<div class="field"><label for="f-status">Status</label><select id="f-status" name="status">${opt("", f.status, "any")}${DELIVERY_STATUSES.map((s) => opt(s, f.status))}</select></div>
<div class="field"><label for="f-event">Event type</label><select id="f-event" name="event_type">${opt("", f.event_type, "any")}${WEBHOOK_EVENT_TYPES.map((e) => opt(e, f.event_type))}</select></div>
<div class="field"><label for="f-since">From (UTC day)</label><input id="f-since" name="since" type="date" value="${f.since ?? ""}"></div>
<div class="field"><label for="f-until">To (UTC day, inclusive)</label><input id="f-until" name="until" type="date" value="${f.until ?? ""}"></div>
<div class="field"><button type="submit" class="secondary">Filter</button></div>
${f.status || f.event_type || f.since || f.until ? html`<div class="field"><a href="/dashboard/webhooks/${webhookId}">Clear filters</a></div>` : ""}
</form>`;
}

const CASE_TEXT: Record<AuditCase, { sent: string; want: string }> = {
  valid: { sent: "A correctly signed test delivery", want: "2xx" },
  wrong_signature: { sent: "Signed with another secret", want: "4xx" },
  stale_timestamp: { sent: "Correctly signed, timestamp 10 minutes old", want: "4xx" },
  no_signature: { sent: "No signature headers at all", want: "4xx" },
};

/** One case of a report as carried in the page's query: the status or error class, and pass/fail. */
export interface AuditShown {
  case: AuditCase;
  answer: string;
  pass: boolean;
}

/** `audit=<answer>~<p|f>,…` in AUDIT_CASES order (after the POST redirects here); undefined when malformed. */
export function auditOf(q: Record<string, string | undefined>): AuditShown[] | undefined {
  const parts = (q.audit ?? "").split(",");
  if (parts.length !== AUDIT_CASES.length) return undefined;
  const out: AuditShown[] = [];
  for (const [i, p] of parts.entries()) {
    const m = /^(\d{3}|[a-z_]{1,20})~([pf])$/.exec(p);
    const c = AUDIT_CASES[i];
    if (!m?.[1] || !c) return undefined;
    out.push({ case: c, answer: m[1], pass: m[2] === "p" });
  }
  return out;
}

/** The query value for a report. */
export const auditQuery = (cases: { status: number | null; error: string | null; verdict: "pass" | "fail" }[]) =>
  cases.map((c) => `${c.status ?? c.error ?? "no_response"}~${c.verdict === "pass" ? "p" : "f"}`).join(",");

/** The "Audit this receiver" button. */
export function auditButton(s: PageSession, webhookId: string): SafeHtml {
  return html`<form method="post" action="/dashboard/webhooks/${webhookId}/audit" class="inline">${csrfField(s.csrfToken)}<button type="submit" class="secondary">Audit this receiver</button></form>`;
}

/** The report: overall verdict, then per case what was sent, what came back and whether that is right. */
export function auditReport(cases: AuditShown[]): SafeHtml {
  const ok = cases.every((c) => c.pass);
  return html`<section class="card" aria-labelledby="audit-h" data-testid="audit-report"><h2 id="audit-h">Receiver audit</h2>
<p class="flash ${ok ? "flash-ok" : "flash-error"}">${
    ok
      ? "OK: your receiver accepted the signed delivery and refused the three it must refuse."
      : `Failed: ${cases
          .filter((c) => !c.pass)
          .map((c) => c.case)
          .join(", ")}. See docs/webhook-receivers.md for what a receiver must check.`
  }</p>
<div class="scroll"><table><thead><tr><th scope="col">Case</th><th scope="col">Sent</th><th scope="col">Expected</th><th scope="col">Answer</th><th scope="col">Result</th></tr></thead>
<tbody>${cases.map(
    (
      c,
    ) => html`<tr data-audit-case="${c.case}"><td data-label="Case"><code>${c.case}</code></td><td data-label="Sent">${CASE_TEXT[c.case].sent}</td><td data-label="Expected">${CASE_TEXT[c.case].want}</td>
<td data-label="Answer">${/^\d+$/.test(c.answer) ? `HTTP ${c.answer}` : c.answer}</td><td data-label="Result"><span class="${c.pass ? "good" : "bad"}">${c.pass ? "pass" : "fail"}</span></td></tr>`,
  )}</tbody></table></div>
<p class="hint">The four requests were test deliveries (<code>X-Webhook-Mode: test</code>, <code>X-Webhook-Audit: true</code>); they are in the deliveries below. At most 10 audits an hour.</p></section>`;
}
