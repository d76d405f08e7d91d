/** The Alerts page: which owner alerts are emailed and where, a test email, and the recent alerts (docs/alerts.md). */
import { ALERT_KINDS, ALERTS_PER_WINDOW, KIND_LABELS, type AlertKind } from "../../alerts/model.ts";
import type { AlertListItem, AlertSettingsView } from "../../alerts/settings.ts";
import { fmtTime, html, type SafeHtml } from "../html.ts";
import { csrfField, layout, type Flash, type PageSession } from "./layout.ts";

export interface AlertsState {
  settings: AlertSettingsView;
  recent: AlertListItem[];
  /** SMTP_URL is set: alerts are emailed. */
  emailOn: boolean;
  /** The address field as typed, when it was refused. */
  email?: string;
  emailError?: string;
  flash?: Flash;
}

const STATE_TEXT: Record<string, string> = {
  pending: "waiting to be sent",
  sent: "emailed",
  skipped: "not emailed (turned off)",
  failed: "could not be emailed",
  queued: "waiting to be sent",
  folded: "in the hourly digest",
};

function subjectOf(a: AlertListItem): string {
  const d = a.details;
  if (a.kind === "webhook_deactivated") return `Webhook ${String(d.webhook_id ?? "")} deactivated`;
  if (a.kind === "quota_80" || a.kind === "quota_100") return `${KIND_LABELS[a.kind]} (${String(d.period ?? "")})`;
  if (a.kind === "api_key_created") return `API key created: ${String(d.name ?? "")}`;
  if (a.kind === "digest") return `Digest: ${KIND_LABELS[d.kind as AlertKind] ?? String(d.kind ?? "")}`;
  if (a.kind === "address_confirmation") return `Confirmation link for ${String(d.email ?? "")}`;
  return KIND_LABELS[a.kind] ?? a.kind;
}

/** Where alerts go now, and the address waiting for its link to be opened (docs/alerts.md#the-alert-address). */
function addressStatus(st: AlertSettingsView): SafeHtml {
  const now = st.email ?? st.accountEmail;
  return html`<p class="hint" data-testid="address-status" data-status="${st.pending ? "pending" : "confirmed"}">Alerts go to <strong>${now}</strong>${st.email ? " (confirmed)" : " (your account email)"}. At most ${ALERTS_PER_WINDOW} emails of a kind an hour; more come as one digest.${
    st.pending
      ? html` <strong>${st.pending.email}</strong> is waiting for confirmation: open the link we emailed there (valid until ${fmtTime(st.pending.expiresAt)}).</p>
<p><button type="submit" class="secondary" form="resend">Send the link again</button></p>`
      : html`</p>`
  }`;
}

/** The page a confirmation link opens: one button, so a mail scanner fetching the link confirms nothing. */
export function confirmAddressPage(o: { action: string; csrf: string; email: string }): SafeHtml {
  return layout({
    title: "Confirm alert address",
    body: html`<form method="post" action="${o.action}" class="card narrow">
<input type="hidden" name="_csrf" value="${o.csrf}">
<p>Send the alert emails of a Courier Tracking account to <strong data-testid="link-email">${o.email}</strong>? This link works once.</p>
<button type="submit" class="primary">Confirm this address</button></form>`,
  });
}

/** The settings form, the test-email button and the recent alerts list. */
export function alertsPage(s: PageSession, st: AlertsState): SafeHtml {
  const err = st.emailError;
  const value = st.email ?? st.settings.pending?.email ?? st.settings.email ?? "";
  return layout({
    title: "Alerts",
    session: s,
    active: "alerts",
    flash: st.flash,
    body: html`${st.emailOn ? "" : html`<p class="warn" data-testid="email-off">Alert emails are off on this server (no mail server is configured): alerts are listed below only.</p>`}
<form method="post" action="/dashboard/alerts" class="card" novalidate>${csrfField(s.csrfToken)}
<h2>Email alerts</h2>
<div class="field"><label for="email">Send alerts to</label>
<p class="hint" id="email-hint">Leave empty to use your account email, ${st.settings.accountEmail}.</p>${err ? html`<p class="field-error" id="email-error">${err}</p>` : ""}
<input id="email" name="email" type="email" autocomplete="email" maxlength="254" value="${value}" aria-describedby="email-hint${err ? " email-error" : ""}"${err ? html` aria-invalid="true"` : ""}>
${addressStatus(st.settings)}</div>
<fieldset><legend>Which alerts</legend>
${ALERT_KINDS.map((k) => html`<label class="choice"><input type="checkbox" name="kinds" value="${k}"${st.settings.disabled.includes(k) ? "" : html` checked`}> ${KIND_LABELS[k]}</label>`)}
</fieldset>
<p class="actions"><button type="submit" class="primary">Save alert settings</button></p></form>
${st.settings.pending ? html`<form method="post" action="/dashboard/alerts/resend" id="resend">${csrfField(s.csrfToken)}</form>` : ""}
<form method="post" action="/dashboard/alerts/test" class="card">${csrfField(s.csrfToken)}
<h2>Test email</h2><p>Sends one email to the confirmed address, whatever alerts are turned off (at most one a minute).</p>
<p class="actions"><button type="submit" class="secondary">Send a test email</button></p></form>
<section class="card" aria-labelledby="recent-h"><h2 id="recent-h">Recent alerts</h2>
${
  st.recent.length === 0
    ? html`<p>No alerts yet.</p>`
    : html`<div class="scroll"><table data-testid="recent-alerts">
<thead><tr><th scope="col">Alert</th><th scope="col">When</th><th scope="col">Status</th><th scope="col">To</th></tr></thead>
<tbody>${st.recent.map(
        (a) => html`<tr><td data-label="">${subjectOf(a)}</td><td data-label="When">${fmtTime(a.createdAt)}</td>
<td data-label="Status">${!st.emailOn && a.state === "pending" ? "shown here only" : (STATE_TEXT[a.state] ?? a.state)}</td><td data-label="To">${a.recipient ?? "—"}</td></tr>`,
      )}</tbody>
</table></div>`
}
</section>`,
  });
}
