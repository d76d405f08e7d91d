/** The profile page (email, password, deletion), the deletion confirmation and the password-link form. */
import { html, type SafeHtml } from "../html.ts";
import { csrfField, layout, type Flash, type PageSession } from "./layout.ts";

/** Problems by form field (`current`, `password`, `confirm`, `email`). */
export type FieldErrors = Record<string, string>;

function input(id: string, label: string, attrs: SafeHtml, errors: FieldErrors, hint?: string): SafeHtml {
  const err = errors[id];
  const ids = [hint ? `${id}-hint` : "", err ? `${id}-error` : ""].filter(Boolean).join(" ");
  return html`<div class="field"><label for="${id}">${label}</label>
${hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : ""}${err ? html`<p class="field-error" id="${id}-error">${err}</p>` : ""}
<input id="${id}" ${attrs}${ids ? html` aria-describedby="${ids}"` : ""}${err ? html` aria-invalid="true"` : ""} required></div>`;
}

const newPasswordFields = (errors: FieldErrors) =>
  html`${input("password", "New password", html`name="password" type="password" autocomplete="new-password" minlength="10" maxlength="128"`, errors, "At least 10 characters. Not a commonly used password, and not your email address.")}
${input("confirm", "New password again", html`name="confirm" type="password" autocomplete="new-password" maxlength="128"`, errors)}`;

export interface ProfileState {
  hasPassword: boolean;
  plan: string;
  /** Which form the errors belong to. */
  form?: "password" | "email";
  errors?: FieldErrors;
  email?: string;
  flash?: Flash;
}

/** Email and password forms, and the way to deletion. */
export function profilePage(s: PageSession, st: ProfileState): SafeHtml {
  const e = (form: ProfileState["form"]) => (st.form === form ? (st.errors ?? {}) : {});
  const current = (form: "password" | "email") =>
    input(
      `${form}-current`,
      "Current password",
      html`name="current" type="password" autocomplete="current-password" maxlength="128"`,
      e(form),
    );
  return layout({
    title: "Profile",
    session: s,
    active: "profile",
    flash: st.flash,
    body: html`<section class="card" aria-labelledby="pw-h"><h2 id="pw-h">Password</h2>
${
  st.hasPassword
    ? html`<form method="post" action="/dashboard/profile/password" novalidate>${csrfField(s.csrfToken)}
${current("password")}
${newPasswordFields(e("password"))}
<button type="submit" class="primary">Change password</button>
<p class="hint">Changing it signs out your other browsers.</p></form>`
    : html`<p>This account has no password yet. Ask your operator for a password link (<code>bun run admin password-link ${s.email}</code>).</p>`
}
</section>
<section class="card" aria-labelledby="email-h"><h2 id="email-h">Email</h2>
<p>You sign in as <strong data-testid="profile-email">${s.email}</strong>.</p>
${
  st.hasPassword
    ? html`<form method="post" action="/dashboard/profile/email" novalidate>${csrfField(s.csrfToken)}
${input("email", "New email", html`name="email" type="email" autocomplete="email" maxlength="254" value="${st.email ?? ""}"`, e("email"))}
${current("email")}
<button type="submit" class="primary">Change email</button></form>`
    : ""
}
</section>
<section class="card" aria-labelledby="delete-h"><h2 id="delete-h">Delete the account</h2>
<p>Deletes the account with its API keys, webhooks and their deliveries, usage and followed shipments. It cannot be undone.</p>
${
  st.plan === "free"
    ? html`<p><a class="button danger" href="/dashboard/profile/delete">Delete the account…</a></p>`
    : html`<p class="warn">The account is on a paid plan. <a href="/dashboard/billing">Change to the Free plan</a> first; then it can be deleted.</p>`
}
</section>`,
  });
}

/** The deletion step: the current password confirms it. */
export function deletePage(s: PageSession, errors: FieldErrors = {}): SafeHtml {
  return layout({
    title: "Delete the account",
    session: s,
    active: "profile",
    body: html`<form method="post" action="/dashboard/profile/delete" class="card narrow" novalidate>${csrfField(s.csrfToken)}
<p>This deletes <strong>${s.email}</strong> and all its data now: API keys stop working at once, webhooks receive nothing more. It cannot be undone.</p>
${input("delete-current", "Current password", html`name="current" type="password" autocomplete="current-password" maxlength="128"`, errors)}
<p class="actions"><button type="submit" class="danger">Delete the account and its data</button> <a href="/dashboard/profile">Cancel</a></p></form>`,
  });
}

/** The form a password link opens: set a password for `email`, then be signed in. */
export function passwordLinkPage(o: {
  action: string;
  csrf: string;
  email: string;
  welcome: boolean;
  errors?: FieldErrors;
}): SafeHtml {
  return layout({
    title: o.welcome ? "Welcome: set your password" : "Set a new password",
    body: html`<form method="post" action="${o.action}" class="card narrow" novalidate>
<input type="hidden" name="_csrf" value="${o.csrf}">
<p>For <strong data-testid="link-email">${o.email}</strong>. ${o.welcome ? "Choose a password to sign in to the dashboard with this account." : "Your other sessions are signed out."} This link works once.</p>
${newPasswordFields(o.errors ?? {})}
<button type="submit" class="primary">Set password and sign in</button></form>`,
  });
}
