/** Sign-up, sign-in and sign-out; messages never tell whether an email has an account (sign-up aside, docs/dashboard.md). */
import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import { createApiKey, listApiKeys } from "../../accounts/service.ts";
import { PASSWORD_MESSAGES, passwordProblem } from "../../accounts/password-policy.ts";
import {
  crossSite,
  csrfRefused,
  htmlResponse,
  pageSession,
  preCsrf,
  preCsrfOk,
  redirect,
  safeNext,
  str,
  unreadableFields,
  type FormBody,
  type RouteDeps,
} from "../http.ts";
import { SignInForm, SignUpForm } from "../model.ts";
import { signIn, signUp } from "../service.ts";
import {
  cookieText,
  createSession,
  destroySession,
  putCookie,
  resolveSession,
  safeEqual,
  SESSION_COOKIE,
  type CookieJar,
} from "../session.ts";
import { keysPage } from "../views/account.ts";
import { signInPage, signUpPage, type AuthFormState } from "../views/auth.ts";
import { defined } from "../../../lib/defined.ts";

const retryText = (seconds: number) =>
  seconds < 60
    ? "Too many attempts right now. Wait a few seconds and try again."
    : `Too many attempts. Wait ${Math.ceil(seconds / 60)} minute${seconds > 60 ? "s" : ""} and try again.`;

/** Sign-up field errors: unreadable text, the email's shape, then the password policy (NIST SP 800-63B). */
async function signUpErrors(
  form: FormBody,
  input: { email: string; password: string },
): Promise<Record<string, string> | undefined> {
  const errors: Record<string, string> = { ...unreadableFields(form, ["email", "password"]) };
  if (!errors.email && !Value.Check(SignUpForm, { email: input.email })) errors.email = "Enter a valid email address.";
  const problem = errors.password ? undefined : await passwordProblem(input.password, input.email);
  if (problem) errors.password = PASSWORD_MESSAGES[problem];
  return Object.keys(errors).length ? errors : undefined;
}

const signedIn = (rd: RouteDeps, cookie: CookieJar) =>
  resolveSession(rd.deps.db, rd.deps.clock, cookieText(cookie, SESSION_COOKIE));
// Rotation: the session behind the cookie the browser brought is deleted.
const startSession = (rd: RouteDeps, cookie: CookieJar, accountId: string) =>
  createSession(rd.deps.db, rd.deps.clock, accountId, cookieText(cookie, SESSION_COOKIE));
const sessionCookie = (cookie: CookieJar, sess: { token: string; maxAgeSeconds: number }) =>
  putCookie(cookie, SESSION_COOKIE, sess.token, sess.maxAgeSeconds);

const renderAuth = (
  cookie: CookieJar,
  page: (st: AuthFormState) => ReturnType<typeof signInPage>,
  st: Omit<AuthFormState, "csrf">,
  status = 200,
) => htmlResponse(page({ ...st, csrf: preCsrf(cookie) }), status);

/** Routes under /dashboard for signing up, in and out. */
export function authRoutes(rd: RouteDeps) {
  const { deps } = rd;
  return new Elysia()
    .get("/dashboard/sign-up", async ({ cookie }) =>
      (await signedIn(rd, cookie)) ? redirect("/dashboard", 302) : renderAuth(cookie, signUpPage, {}),
    )
    .get("/dashboard/sign-in", async ({ cookie, query }) => {
      if (await signedIn(rd, cookie)) return redirect("/dashboard", 302);
      const done =
        query.done === "signed-out"
          ? { kind: "ok" as const, text: "You are signed out." }
          : query.expired
            ? { kind: "error" as const, text: "Your session has ended; sign in again." }
            : undefined;
      return renderAuth(cookie, signInPage, { next: query.next ? safeNext(query.next) : undefined, flash: done });
    })
    .post("/dashboard/sign-up", async ({ request, cookie, body }) => signUpPost(rd, request, cookie, body as FormBody))
    .post("/dashboard/sign-in", async ({ request, cookie, body }) => signInPost(rd, request, cookie, body as FormBody))
    .post("/dashboard/sign-out", async ({ request, cookie, body }) => {
      const form = body as FormBody;
      const token = cookieText(cookie, SESSION_COOKIE);
      const s = await resolveSession(deps.db, deps.clock, token);
      if (s && (crossSite(request) || !safeEqual(str(form, "_csrf"), s.csrfToken))) return csrfRefused(pageSession(s));
      await destroySession(deps.db, token);
      putCookie(cookie, SESSION_COOKIE, "", 0);
      return redirect("/dashboard/sign-in?done=signed-out");
    });
}

async function signUpPost(rd: RouteDeps, request: Request, cookie: CookieJar, form: FormBody): Promise<Response> {
  const { deps } = rd;
  if (!preCsrfOk({ request, cookie }, form)) return csrfRefused();
  const input = { email: str(form, "email").trim(), password: str(form, "password") };
  const errors = await signUpErrors(form, input);
  if (errors) return renderAuth(cookie, signUpPage, { email: errors.email ? undefined : input.email, errors }, 422);
  const r = await signUp({ ...deps, work: rd.work }, { ...input, ip: rd.clientIpOf(request) });
  if (!r.ok) {
    const text =
      r.reason === "throttled"
        ? retryText(r.retryAfterSeconds)
        : "We could not create an account with these details. If you already have one, sign in instead.";
    return renderAuth(
      cookie,
      signUpPage,
      { email: input.email, flash: { kind: "error", text } },
      r.reason === "throttled" ? 429 : 422,
    );
  }
  const sess = await startSession(rd, cookie, r.accountId);
  if (!r.created) {
    sessionCookie(cookie, sess);
    return redirect("/dashboard");
  }
  // A new account gets its first key at once: "sign up, copy the key" (spec: Authentication 2).
  const key = await createApiKey(deps.db, r.accountId, "default", { alert: false });
  const s = await resolveSession(deps.db, deps.clock, sess.token);
  const page = keysPage(
    pageSession(defined(s, "the session just started")),
    await listApiKeys(deps.db, r.accountId, deps.services.keyUse),
    {
      newKey: key.key,
      flash: { kind: "ok", text: "Welcome! Your account is on the Free plan. Here is your first API key." },
    },
  );
  sessionCookie(cookie, sess);
  return htmlResponse(page, 201);
}

async function signInPost(rd: RouteDeps, request: Request, cookie: CookieJar, form: FormBody): Promise<Response> {
  if (!preCsrfOk({ request, cookie }, form)) return csrfRefused();
  const input = { email: str(form, "email").trim(), password: str(form, "password") };
  const next = str(form, "next");
  const generic = { kind: "error" as const, text: "The email or password is incorrect." };
  // Unreadable text (NUL, invalid UTF-8) is said plainly: it is about the input, not the account.
  const errors = unreadableFields(form, ["email", "password", "next"]);
  if (errors) return renderAuth(cookie, signInPage, { email: errors.email ? undefined : input.email, errors }, 422);
  if (Value.Errors(SignInForm, input).First())
    return renderAuth(cookie, signInPage, { email: input.email, next, flash: generic }, 401);
  const r = await signIn({ ...rd.deps, work: rd.work }, { ...input, ip: rd.clientIpOf(request) });
  if (!r.ok) {
    if (r.reason === "throttled") {
      const res = renderAuth(
        cookie,
        signInPage,
        { email: input.email, next, flash: { kind: "error", text: retryText(r.retryAfterSeconds) } },
        429,
      );
      res.headers.set("retry-after", String(r.retryAfterSeconds));
      return res;
    }
    return renderAuth(cookie, signInPage, { email: input.email, next, flash: generic }, 401);
  }
  sessionCookie(cookie, await startSession(rd, cookie, r.accountId));
  return redirect(safeNext(next));
}
