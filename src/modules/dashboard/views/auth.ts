/** Sign-in and sign-up pages. Error messages are generic (no account enumeration). */
import { html, type SafeHtml } from "../html.ts";
import { layout, type Flash } from "./layout.ts";

export interface AuthFormState {
  csrf: string;
  email?: string;
  next?: string;
  flash?: Flash;
  /** Field problems: `email`, `password`; `form` (or `next`) for the form as a whole. */
  errors?: Record<string, string>;
}

/** A problem with the form as a whole (an unreadable field name or hidden field). */
function formError(st: AuthFormState): SafeHtml {
  const e = st.errors?.form ?? st.errors?.next;
  return e ? html`<p class="field-error" role="alert">${e}</p>` : html``;
}

function field(name: "email" | "password", label: string, st: AuthFormState, attrs: SafeHtml, hint?: string): SafeHtml {
  const err = st.errors?.[name];
  const ids = [hint ? `${name}-hint` : "", err ? `${name}-error` : ""].filter(Boolean).join(" ");
  return html`<div class="field">
  <label for="${name}">${label}</label>
  ${hint ? html`<p class="hint" id="${name}-hint">${hint}</p>` : ""}
  ${err ? html`<p class="field-error" id="${name}-error">${err}</p>` : ""}
  <input id="${name}" name="${name}" ${attrs}${ids ? html` aria-describedby="${ids}"` : ""}${err ? html` aria-invalid="true"` : ""} required>
</div>`;
}

/** The sign-in form. */
export function signInPage(st: AuthFormState): SafeHtml {
  return layout({
    title: "Sign in",
    flash: st.flash,
    body: html`<form method="post" action="/dashboard/sign-in" class="card narrow" novalidate>
  <input type="hidden" name="_csrf" value="${st.csrf}">
  ${formError(st)}
  ${st.next ? html`<input type="hidden" name="next" value="${st.next}">` : ""}
  ${field("email", "Email", st, html`type="email" autocomplete="username" maxlength="254" value="${st.email ?? ""}"`)}
  ${field("password", "Password", st, html`type="password" autocomplete="current-password" maxlength="128"`)}
  <button type="submit" class="primary">Sign in</button>
</form>
<p>New here? <a href="/dashboard/sign-up">Create a free account</a> — no credit card needed.</p>`,
  });
}

/** The sign-up form. */
export function signUpPage(st: AuthFormState): SafeHtml {
  return layout({
    title: "Create your account",
    flash: st.flash,
    body: html`<form method="post" action="/dashboard/sign-up" class="card narrow" novalidate>
  <input type="hidden" name="_csrf" value="${st.csrf}">
  ${formError(st)}
  ${field("email", "Email", st, html`type="email" autocomplete="email" maxlength="254" value="${st.email ?? ""}"`)}
  ${field("password", "Password", st, html`type="password" autocomplete="new-password" minlength="10" maxlength="128"`, "At least 10 characters. Not a commonly used password, and not your email address.")}
  <button type="submit" class="primary">Create account</button>
</form>
<p>New accounts start on the Free plan (100 tracking requests a month). Already registered? <a href="/dashboard/sign-in">Sign in</a>.</p>`,
  });
}
