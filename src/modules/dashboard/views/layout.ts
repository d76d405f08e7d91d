/** The page shell: skip link, header with email and navigation, one `<main>`, same-origin assets only. */
import { html, type Renderable, type SafeHtml } from "../html.ts";

export interface PageSession {
  email: string;
  csrfToken: string;
}

export type NavKey = "overview" | "keys" | "billing" | "webhooks" | "shipments" | "branding" | "alerts" | "profile";

const NAV: [NavKey, string, string][] = [
  ["overview", "/dashboard", "Overview"],
  ["keys", "/dashboard/keys", "API keys"],
  ["billing", "/dashboard/billing", "Usage & plan"],
  ["webhooks", "/dashboard/webhooks", "Webhooks"],
  ["shipments", "/dashboard/shipments", "Shipments"],
  ["branding", "/dashboard/branding", "Tracking page"],
  ["alerts", "/dashboard/alerts", "Alerts"],
  ["profile", "/dashboard/profile", "Profile"],
];

/** A hidden CSRF field for a form. */
export const csrfField = (token: string) => html`<input type="hidden" name="_csrf" value="${token}">`;

export interface Flash {
  kind: "ok" | "error";
  text: string;
}

/** A status message announced to screen readers. */
function flashBox(f: Flash | undefined): SafeHtml {
  if (!f) return html``;
  return f.kind === "error"
    ? html`<div class="flash flash-error" role="alert">${f.text}</div>`
    : html`<div class="flash flash-ok" role="status">${f.text}</div>`;
}

/** Wraps `body` in the full document. */
export function layout(opts: {
  title: string;
  session?: PageSession;
  active?: NavKey;
  flash?: Flash;
  body: Renderable;
}): SafeHtml {
  const s = opts.session;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${opts.title} · Courier Tracking dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
<script src="/dashboard/assets/dashboard.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="/dashboard">Courier Tracking</a>
  ${
    s
      ? html`<nav aria-label="Main"><ul>${NAV.map(
          ([k, href, label]) =>
            html`<li><a href="${href}"${k === opts.active ? html` aria-current="page"` : ""}>${label}</a></li>`,
        )}</ul></nav>
  <div class="who"><span class="email" data-testid="account-email">${s.email}</span>
    <form method="post" action="/dashboard/sign-out" class="inline">${csrfField(s.csrfToken)}<button type="submit" class="link">Sign out</button></form></div>`
      : html`<nav aria-label="Account"><ul><li><a href="/dashboard/sign-in">Sign in</a></li><li><a href="/dashboard/sign-up">Sign up</a></li></ul></nav>`
  }
</header>
<main id="main" tabindex="-1">
<h1>${opts.title}</h1>
${flashBox(opts.flash)}
${opts.body}
</main>
<footer class="foot"><a href="/docs">API reference</a> · times are UTC</footer>
</body>
</html>`;
}
