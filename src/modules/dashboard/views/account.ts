/** API keys and the usage block; the plain message page. */
import type { Plan } from "../../../domain/plans.ts";
import { fmtInt, fmtTime, html, type SafeHtml } from "../html.ts";
import { csrfField, layout, type Flash, type PageSession } from "./layout.ts";

export interface UsageInfo {
  used: number;
  plan: Plan;
  resetsAt: Date;
}

/** Used / quota with a native progress bar, reset date and rate limit. */
export function usageBlock(u: UsageInfo): SafeHtml {
  const quota = u.plan.monthly_quota;
  const pct = quota > 0 ? Math.min(100, Math.round((u.used / quota) * 1000) / 10) : 100;
  return html`<section class="card" aria-labelledby="usage-h">
  <h2 id="usage-h">This month's usage</h2>
  <p class="big"><strong data-testid="usage-used">${fmtInt(u.used)}</strong> of <span data-testid="usage-quota">${fmtInt(quota)}</span> tracking requests (${pct}%)</p>
  <progress max="${quota}" value="${Math.min(u.used, quota)}" aria-label="Monthly quota used">${pct}%</progress>
  ${u.used >= quota ? html`<p class="warn" role="alert">Your quota is used up: <code>/v1/track</code> answers 402 until it resets or you <a href="/dashboard/billing">upgrade</a>. The same key works at once after an upgrade.</p>` : ""}
  <dl class="facts">
    <div><dt>Plan</dt><dd data-testid="plan-name">${u.plan.name}</dd></div>
    <div><dt>Quota resets</dt><dd>${fmtTime(u.resetsAt)}</dd></div>
    <div><dt>Rate limit</dt><dd>${fmtInt(u.plan.rate_limit_per_minute)} requests per minute, all keys together</dd></div>
    <div><dt>Live webhooks</dt><dd>${u.plan.live_webhooks ? "included" : "not included (test webhooks only)"}</dd></div>
  </dl>
  <p class="hint">Only <code>GET /v1/track</code> answered 200 counts; listing couriers is free.</p>
</section>`;
}

export interface KeyRow {
  id: string;
  prefix: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** API keys: the one-time reveal of a new key, the create form and the list. */
export function keysPage(
  s: PageSession,
  keys: KeyRow[],
  opts: { newKey?: string; flash?: Flash; nameError?: string } = {},
): SafeHtml {
  const live = keys.filter((k) => !k.revokedAt);
  const revoked = keys.filter((k) => k.revokedAt);
  return layout({
    title: "API keys",
    session: s,
    active: "keys",
    flash: opts.flash,
    body: html`${
      opts.newKey
        ? html`<section class="card reveal" aria-labelledby="newkey-h">
  <h2 id="newkey-h">Your new API key</h2>
  <p><strong>Copy it now: it is shown only once.</strong> Send it in the <code>X-API-Key</code> header.</p>
  <div class="copy-row"><input id="new-key" class="mono" readonly value="${opts.newKey}" aria-label="New API key" data-testid="new-key">
  <button type="button" data-copy="new-key">Copy</button></div>
  <p class="copied" aria-live="polite" data-copied-for="new-key"></p>
</section>`
        : ""
    }
<section class="card" aria-labelledby="create-h">
  <h2 id="create-h">Create a key</h2>
  <form method="post" action="/dashboard/keys" class="row">${csrfField(s.csrfToken)}
    <div class="field"><label for="key-name">Name (optional)</label>
    ${opts.nameError ? html`<p class="field-error" id="key-name-error">${opts.nameError}</p>` : ""}
    <input id="key-name" name="name" maxlength="60" placeholder="e.g. production"${opts.nameError ? html` aria-invalid="true" aria-describedby="key-name-error"` : ""}></div>
    <button type="submit" class="primary">Create API key</button>
  </form>
</section>
<section class="card" aria-labelledby="keys-h">
  <h2 id="keys-h">Active keys</h2>
  ${
    live.length === 0
      ? html`<p>No active keys.</p>`
      : html`<div class="scroll"><table>
  <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
  <tbody>${live.map(
    (k) => html`<tr data-key-id="${k.id}">
    <td data-label="Name">${k.name}</td><td data-label="Key" class="mono">${k.prefix}…</td><td data-label="Created">${fmtTime(k.createdAt)}</td>
    <td data-label="Last used">${k.lastUsedAt ? fmtTime(k.lastUsedAt) : "never"}</td>
    <td data-label=""><form method="post" action="/dashboard/keys/${k.id}/revoke" data-confirm="Revoke the key ${k.prefix}…? Requests using it will fail at once.">${csrfField(s.csrfToken)}
      <button type="submit" class="danger" aria-label="Revoke key ${k.prefix}">Revoke</button></form></td></tr>`,
  )}</tbody>
</table></div>`
  }
  ${revoked.length ? html`<details><summary>${revoked.length} revoked key${revoked.length === 1 ? "" : "s"}</summary><ul>${revoked.map((k) => html`<li><span class="mono">${k.prefix}…</span> ${k.name}, revoked ${fmtTime(k.revokedAt)}</li>`)}</ul></details>` : ""}
</section>`,
  });
}

/** A plain message page (404, 403 CSRF, 429, 500). */
export function messagePage(title: string, text: string, session?: PageSession): SafeHtml {
  return layout({ title, session, body: html`<p>${text}</p><p><a href="/dashboard">Back to the dashboard</a></p>` });
}
