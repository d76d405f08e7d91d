/** The Tracking page settings: links on or off, branding, framing, and a preview (docs/tracking-page.md#branding). */
import type { Branding } from "../../public-page/branding.ts";
import { html, type SafeHtml } from "../html.ts";
import { csrfField, layout, type Flash, type PageSession } from "./layout.ts";

export interface BrandingState {
  branding: Branding;
  /** Views of the account's pages, newest day first. */
  views: { day: string; views: number }[];
  error?: string;
  flash?: Flash;
}

const text = (id: string, label: string, value: string | null, hint: string, extra: SafeHtml = html``) =>
  html`<div class="field"><label for="${id}">${label}</label><p class="hint" id="${id}-hint">${hint}</p>
<input id="${id}" name="${id}" value="${value ?? ""}" aria-describedby="${id}-hint"${extra}></div>`;

/** The settings form, the preview links and the views of the last days. */
export function brandingPage(s: PageSession, st: BrandingState): SafeHtml {
  const b = st.branding;
  return layout({
    title: "Tracking page",
    session: s,
    active: "branding",
    flash: st.flash ?? (st.error ? { kind: "error", text: st.error } : undefined),
    body: html`<p>Every followed shipment has a <code>public_url</code>: a page you can send the buyer. It shows the
state, the expected delivery and the journey in English or Hindi, with your name and colours, and no personal data.</p>
<p class="actions"><a href="/dashboard/branding/preview?lang=en" data-testid="preview-en">Preview in English</a> ·
<a href="/dashboard/branding/preview?lang=hi" lang="hi" hreflang="hi">हिन्दी में पूर्वावलोकन</a></p>
<form method="post" action="/dashboard/branding" class="card" enctype="multipart/form-data" novalidate>${csrfField(s.csrfToken)}
<h2>Branding</h2>
<label class="choice"><input type="checkbox" name="public_links_enabled" value="on"${b.publicLinksEnabled ? html` checked` : ""}> Public tracking links are on (off: every link answers “not found”)</label>
${text("display_name", "Shop name", b.displayName, "Shown at the top of the page. Up to 80 characters.", html` maxlength="80"`)}
${text("accent_color", "Accent colour", b.accentColor, "#rrggbb for headings and links. It must reach 4.5:1 contrast on white (WCAG AA).", html` pattern="#[0-9A-Fa-f]{6}" placeholder="#0b57d0"`)}
${text("support_url", "Help page", b.supportUrl, "An https page where buyers get help; shown with a failed delivery attempt.", html` type="url"`)}
${text("support_email", "Help e-mail", b.supportEmail, "An address buyers can write to.", html` type="email" autocomplete="off"`)}
<label class="choice"><input type="checkbox" name="show_reference" value="on"${b.showReference ? html` checked` : ""}> Show your reference (e.g. order number) on the page</label>
<div class="field"><label for="frame_ancestors">Sites that may embed the page</label>
<p class="hint" id="frame_ancestors-hint">https origins, one a line (for an &lt;iframe&gt; in your shop). Empty: none.</p>
<textarea id="frame_ancestors" name="frame_ancestors" rows="3" aria-describedby="frame_ancestors-hint">${b.frameAncestors.join("\n")}</textarea></div>
${b.logoData ? html`<p><img src="data:image/png;base64,${b.logoData}" alt="Your logo" height="40" data-testid="logo-preview"></p><label class="choice"><input type="checkbox" name="remove_logo" value="on"> Remove the logo</label>` : ""}
<div class="field"><label for="logo">${b.logoData ? "Replace the logo" : "Logo"}</label>
<p class="hint" id="logo-hint">A PNG of at most 16 KiB (SVG is not accepted). Leave empty to keep the current one.</p>
<input type="file" id="logo" name="logo" accept="image/png" aria-describedby="logo-hint"></div>
<p class="actions"><button type="submit" class="primary">Save</button></p></form>
<section class="card" aria-labelledby="views-h"><h2 id="views-h">Views</h2>
${
  st.views.length === 0
    ? html`<p>No views yet.</p>`
    : html`<table data-testid="page-views"><thead><tr><th scope="col">Day (UTC)</th><th scope="col">Views</th></tr></thead>
<tbody>${st.views.map((v) => html`<tr><td>${v.day}</td><td>${v.views}</td></tr>`)}</tbody></table>`
}</section>`,
  });
}
