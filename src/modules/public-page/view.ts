/** The tracking page's HTML (docs/tracking-page.md#the-page): no script, one stylesheet, every value escaped. */
import { createHash } from "node:crypto";
import { DateTime } from "luxon";
import { html, type SafeHtml } from "../../lib/html.ts";
import { type Lang, words } from "./i18n.ts";
import type { PageData } from "./service.ts";

/** The accent when the account set none: #0b57d0 on white is 6.0:1 (WCAG AA). */
const DEFAULT_ACCENT = "#0b57d0";

/** The one inline style (the accent as a custom property) and its CSP hash source. */
export function accentStyle(accent: string | null): { css: string; source: string } {
  // The accent is `#rrggbb` by the branding schema; anything else falls back rather than reach CSS.
  const colour = accent && /^#[0-9a-f]{6}$/i.test(accent) ? accent : DEFAULT_ACCENT;
  const css = `:root{--accent:${colour}}`;
  return { css, source: `'sha256-${createHash("sha256").update(css).digest("base64")}'` };
}

const LOCALE: Record<Lang, string> = { en: "en-IN", hi: "hi-IN" };

function day(lang: Lang, ymd: string): string {
  const d = DateTime.fromISO(ymd, { zone: "utc" });
  return d.isValid
    ? d.setLocale(LOCALE[lang]).toLocaleString({ weekday: "short", day: "numeric", month: "long" })
    : ymd;
}

function when(lang: Lang, localIso: string): string {
  const d = DateTime.fromISO(localIso, { setZone: true });
  return d.isValid ? d.setLocale(LOCALE[lang]).toLocaleString(DateTime.DATETIME_MED) : localIso;
}

function windowText(lang: Lang, p: NonNullable<PageData["predicted_delivery"]>): string {
  return p.earliest === p.latest ? day(lang, p.earliest) : `${day(lang, p.earliest)} – ${day(lang, p.latest)}`;
}

function contact(d: PageData, lang: Lang): SafeHtml {
  const w = words(lang);
  const m = d.merchant;
  if (!m.support_url && !m.support_email) return html`<p>${w.contactGeneric}</p>`;
  return html`<p>${w.contact}${m.name ? ` ${m.name}` : ""}:
    ${m.support_url ? html`<a href="${m.support_url}" rel="noopener noreferrer">${w.supportLink}</a>` : ""}
    ${m.support_url && m.support_email ? " · " : ""}
    ${m.support_email ? html`<a href="mailto:${m.support_email}">${w.supportEmail}: ${m.support_email}</a>` : ""}</p>`;
}

/** The whole page for `d`; `selfPath` is the page's own path (the language switch links to it). */
export function trackingPage(
  d: PageData,
  opts: { selfPath: string; cssHref: string; logoHref: string | null },
): string {
  const lang = d.language;
  const w = words(lang);
  const other: Lang = lang === "en" ? "hi" : "en";
  const style = accentStyle(d.merchant.accent_color);
  const title = d.merchant.name ? `${w.title} · ${d.merchant.name}` : w.title;
  return `<!doctype html>${html`<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="stylesheet" href="${opts.cssHref}">
<style>${style.css}</style>
</head>
<body>
<header class="brand">
${opts.logoHref ? html`<img src="${opts.logoHref}" alt="${d.merchant.name ?? ""}" height="40">` : ""}
${d.merchant.name ? html`<span class="name">${d.merchant.name}</span>` : ""}
<a class="lang" href="${opts.selfPath}?lang=${other}" hreflang="${other}" lang="${other}">${w.switchTo}</a>
</header>
<main>
<h1>${d.status_text}</h1>
<dl class="facts">
${
  d.predicted_delivery
    ? html`<div><dt>${w.predicted}</dt><dd class="big">${windowText(lang, d.predicted_delivery)}</dd></div>`
    : d.courier_estimate
      ? html`<div><dt>${w.courierEstimate}</dt><dd class="big">${day(lang, d.courier_estimate)}</dd></div>`
      : ""
}
${d.delivered && d.checkpoints[0] ? html`<div><dt>${w.deliveredOn}</dt><dd class="big">${when(lang, d.checkpoints[0].local_time)}</dd></div>` : ""}
<div><dt>${w.courier}</dt><dd>${d.courier.name}</dd></div>
<div><dt>${w.awb}</dt><dd>${d.tracking_number}</dd></div>
${d.reference ? html`<div><dt>${w.reference}</dt><dd>${d.reference}</dd></div>` : ""}
</dl>
${d.stalled ? html`<p class="notice" role="status">${w.stalled}</p>` : ""}
${
  d.failed_attempt
    ? html`<section class="notice" aria-labelledby="failed"><h2 id="failed">${w.failedTitle}</h2>
<p>${d.failed_attempt.meaning}</p><p>${d.failed_attempt.what_to_do}</p>${contact(d, lang)}</section>`
    : ""
}
<section aria-labelledby="journey"><h2 id="journey">${w.timeline}</h2>
${
  d.checkpoints.length === 0
    ? html`<p>${w.noCheckpoints}</p>`
    : html`<ol class="timeline">${d.checkpoints.map(
        (c) =>
          html`<li><time datetime="${c.at}">${when(lang, c.local_time)}</time><span class="what">${c.text}</span>${c.location ? html`<span class="where">${c.location}</span>` : ""}</li>`,
      )}</ol>`
}
<p class="small">${w.timesIn(d.time_zone === "Asia/Kolkata" ? "IST (UTC+05:30)" : "UTC")}</p>
</section>
</main>
<footer>${d.failed_attempt ? "" : contact(d, lang)}</footer>
</body>
</html>`}`;
}

/** The 404 (unknown, revoked or switched-off link: one page for all) and 429 pages. */
export function messagePage(lang: Lang, title: string, text: string, cssHref: string): string {
  return `<!doctype html>${html`<html lang="${lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex, nofollow">
<title>${title}</title><link rel="stylesheet" href="${cssHref}"></head>
<body><main><h1>${title}</h1><p>${text}</p></main></body></html>`}`;
}

/** `words(lang)` re-exported for the routes' message pages. */
export { words };
