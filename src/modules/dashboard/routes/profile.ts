/** Profile changes and one-time password links (docs/dashboard.md, "Profile", "Password links"). */
import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import { findPasswordLink, usePasswordLink } from "../../accounts/password-links.ts";
import { PASSWORD_MESSAGES, passwordProblem } from "../../accounts/password-policy.ts";
import { EmailTakenError, findAccount } from "../../accounts/service.ts";
import {
  csrfRefused,
  htmlResponse,
  pageSession,
  preCsrf,
  preCsrfOk,
  redirect,
  str,
  withForm,
  withSession,
  type FormBody,
  type RouteDeps,
} from "../http.ts";
import { SignUpForm } from "../model.ts";
import { changeEmail, checkPassword, deleteAccount, setPassword } from "../profile/service.ts";
import {
  cookieText,
  createSession,
  putCookie,
  SESSION_COOKIE,
  type CookieJar,
  type DashboardSession,
} from "../session.ts";
import { messagePage } from "../views/account.ts";
import type { Flash } from "../views/layout.ts";
import { deletePage, passwordLinkPage, profilePage, type FieldErrors, type ProfileState } from "../views/profile.ts";

const DONE: Record<string, Flash> = {
  password: { kind: "ok", text: "Your password is changed. Your other browsers are signed out." },
  email: { kind: "ok", text: "Your email is changed: sign in with the new address from now on." },
  "password-set": { kind: "ok", text: "Your password is set and you are signed in." },
};
const WRONG_PASSWORD = "The current password is incorrect.";

/** Problems with a new password (the sign-up policy, accounts/password-policy.ts) and its confirmation, by field. */
async function newPasswordErrors(form: FormBody, email: string): Promise<FieldErrors> {
  const errors: FieldErrors = {};
  const problem = await passwordProblem(str(form, "password"), email);
  if (problem) errors.password = PASSWORD_MESSAGES[problem];
  else if (str(form, "confirm") !== str(form, "password")) errors.confirm = "The two passwords differ.";
  return errors;
}

/** Routes for /dashboard/profile… and /dashboard/password-link/:token. */
export function profileRoutes(rd: RouteDeps) {
  return new Elysia().use(profileFormRoutes(rd)).use(passwordLinkRoutes(rd));
}

function profileFormRoutes(rd: RouteDeps) {
  const { deps } = rd;
  const state = async (s: DashboardSession, extra: Partial<ProfileState> = {}): Promise<ProfileState> => {
    const acc = await findAccount(deps.db, s.account.id);
    return { hasPassword: Boolean(acc?.passwordHash), plan: s.account.plan, ...extra };
  };
  const profile = async (s: DashboardSession, extra: Partial<ProfileState>, status = 200) =>
    htmlResponse(profilePage(pageSession(s), await state(s, extra)), status);

  return new Elysia()
    .get("/dashboard/profile", ({ request, cookie, query }) =>
      withSession(rd, { request, cookie }, (s) => profile(s, { flash: query.done ? DONE[query.done] : undefined })),
    )
    .post("/dashboard/profile/password", ({ request, cookie, body }) =>
      withForm(rd, { request, cookie, body }, async (s, form) => {
        const errors = await newPasswordErrors(form, s.account.email);
        if (!(await checkPassword(deps.db, s.account.id, str(form, "current"))))
          errors["password-current"] = WRONG_PASSWORD;
        if (Object.keys(errors).length) return profile(s, { form: "password", errors }, 422);
        await setPassword(deps.db, s.account.id, str(form, "password"), s.id);
        return redirect("/dashboard/profile?done=password");
      }),
    )
    .post("/dashboard/profile/email", ({ request, cookie, body }) =>
      withForm(rd, { request, cookie, body }, async (s, form) => {
        const email = str(form, "email").trim();
        const errors: FieldErrors = {};
        if (!Value.Check(SignUpForm.properties.email, email)) errors.email = "Enter a valid email address.";
        if (!(await checkPassword(deps.db, s.account.id, str(form, "current"))))
          errors["email-current"] = WRONG_PASSWORD;
        if (Object.keys(errors).length) return profile(s, { form: "email", errors, email }, 422);
        try {
          await changeEmail(deps.db, s.account.id, email);
        } catch (e) {
          if (!(e instanceof EmailTakenError)) throw e;
          return profile(
            s,
            { form: "email", errors: { email: "This email cannot be used. Choose another one." }, email },
            409,
          );
        }
        return redirect("/dashboard/profile?done=email");
      }),
    )
    .get("/dashboard/profile/delete", ({ request, cookie }) =>
      withSession(rd, { request, cookie }, (s) =>
        s.account.plan === "free" ? htmlResponse(deletePage(pageSession(s))) : redirect("/dashboard/profile", 302),
      ),
    )
    .post("/dashboard/profile/delete", ({ request, cookie, body }) =>
      withForm(rd, { request, cookie, body }, async (s, form) => {
        if (s.account.plan !== "free")
          return profile(
            s,
            { flash: { kind: "error", text: "Change to the Free plan before deleting the account." } },
            409,
          );
        if (!(await checkPassword(deps.db, s.account.id, str(form, "current"))))
          return htmlResponse(deletePage(pageSession(s), { "delete-current": WRONG_PASSWORD }), 422);
        await deleteAccount(deps.db, s.account.id);
        deps.log.info("account deleted by its owner", { account_id: s.account.id });
        putCookie(cookie, SESSION_COOKIE, "", 0);
        return htmlResponse(
          messagePage("Account deleted", "The account and its data are deleted. Thank you for using Courier Tracking."),
        );
      }),
    );
}

function passwordLinkRoutes(rd: RouteDeps) {
  const { deps } = rd;
  const linkForm = (
    cookie: CookieJar,
    token: string,
    link: { email: string; purpose: string },
    errors?: FieldErrors,
    status = 200,
  ) => {
    const res = htmlResponse(
      passwordLinkPage({
        action: `/dashboard/password-link/${token}`,
        csrf: preCsrf(cookie),
        email: link.email,
        welcome: link.purpose === "welcome",
        errors,
      }),
      status,
    );
    // The token is in the path: never let it leave in a Referer.
    res.headers.set("referrer-policy", "no-referrer");
    return res;
  };
  const deadLink = () =>
    htmlResponse(
      messagePage(
        "Link not valid",
        "This password link is unknown, already used or expired. Ask your operator for a new one.",
      ),
      404,
    );

  return new Elysia()
    .get("/dashboard/password-link/:token", async ({ cookie, params }) => {
      const link = await findPasswordLink(deps.db, params.token, deps.clock.now());
      return link ? linkForm(cookie, params.token, link) : deadLink();
    })
    .post("/dashboard/password-link/:token", async ({ request, cookie, params, body }) => {
      const form = body as FormBody;
      if (!preCsrfOk({ request, cookie }, form)) return csrfRefused();
      const link = await findPasswordLink(deps.db, params.token, deps.clock.now());
      if (!link) return deadLink();
      const errors = await newPasswordErrors(form, link.email);
      if (Object.keys(errors).length) return linkForm(cookie, params.token, link, errors, 422);
      const accountId = await usePasswordLink(deps.db, params.token, deps.clock.now());
      if (!accountId) return deadLink();
      await setPassword(deps.db, accountId, str(form, "password"));
      const sess = await createSession(deps.db, deps.clock, accountId, cookieText(cookie, SESSION_COOKIE));
      putCookie(cookie, SESSION_COOKIE, sess.token, sess.maxAgeSeconds);
      return redirect("/dashboard/profile?done=password-set");
    });
}
