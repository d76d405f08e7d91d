/** The Alerts settings page (docs/alerts.md): which owner alerts are emailed, to which address, and a test email. */
import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import { ALERT_KINDS } from "../../alerts/model.ts";
import { confirmAddress, findAddressLink } from "../../alerts/address.ts";
import {
  changeAlertAddress,
  queueTestEmail,
  readAlertSettings,
  recentAlerts,
  resendConfirmation,
  saveAlertSettings,
  type AddressChange,
} from "../../alerts/settings.ts";
import {
  csrfRefused,
  htmlResponse,
  pageSession,
  preCsrf,
  preCsrfOk,
  redirect,
  str,
  unreadableFields,
  withForm,
  withSession,
  type FormBody,
  type RouteDeps,
} from "../http.ts";
import { SignUpForm } from "../model.ts";
import type { DashboardSession } from "../session.ts";
import { messagePage } from "../views/account.ts";
import { alertsPage, confirmAddressPage, type AlertsState } from "../views/alerts.ts";
import type { Flash } from "../views/layout.ts";

const DONE: Record<string, Flash> = {
  saved: { kind: "ok", text: "Alert settings saved." },
  test: { kind: "ok", text: "Test email queued: it goes out within a few seconds." },
  "test-again": { kind: "error", text: "A test email was already queued this minute." },
  requested: {
    kind: "ok",
    text: "Alert settings saved. We emailed a confirmation link to the new address: alerts go there once it is opened.",
  },
  limited: {
    kind: "error",
    text: "Alert settings saved, but the new address was not: at most 3 confirmation emails an hour. Try again later.",
  },
  resent: { kind: "ok", text: "A new confirmation link is on its way; the earlier one no longer works." },
};
const DONE_OF: Record<AddressChange, string> = {
  unchanged: "saved",
  reset: "saved",
  requested: "requested",
  limited: "limited",
};

/** Routes for /dashboard/alerts…. */
export function alertRoutes(rd: RouteDeps) {
  const { deps } = rd;
  const page = async (s: DashboardSession, extra: Partial<AlertsState> = {}, status = 200) => {
    const [settings, recent] = await Promise.all([
      readAlertSettings(deps.db, s.account.id, deps.clock.now()),
      recentAlerts(deps.db, s.account.id),
    ]);
    return htmlResponse(
      alertsPage(pageSession(s), { settings, recent, emailOn: Boolean(deps.config.smtpUrl), ...extra }),
      status,
    );
  };
  return new Elysia()
    .get("/dashboard/alerts", ({ request, cookie, query }) =>
      withSession(rd, { request, cookie }, (s) => page(s, { flash: query.done ? DONE[query.done] : undefined })),
    )
    .post("/dashboard/alerts", ({ request, cookie, body }) =>
      withForm(rd, { request, cookie, body }, async (s, form) => {
        const unreadable = unreadableFields(form, ["email", "kinds"]);
        if (unreadable) return page(s, { emailError: unreadable.email ?? unreadable.kinds ?? unreadable.form }, 422);
        const email = str(form, "email").trim();
        if (email && !Value.Check(SignUpForm.properties.email, email))
          return page(s, { email, emailError: "Enter a valid email address, or leave it empty." }, 422);
        const kinds = form.kinds ?? [];
        await saveAlertSettings(deps.db, s.account.id, { disabled: ALERT_KINDS.filter((k) => !kinds.includes(k)) });
        const address = email ? email.toLowerCase() : null;
        const change = await changeAlertAddress(deps.db, deps.secretsKey, s.account.id, address, deps.clock.now());
        return redirect(`/dashboard/alerts?done=${DONE_OF[change]}`);
      }),
    )
    .post("/dashboard/alerts/resend", ({ request, cookie, body }) =>
      withForm(rd, { request, cookie, body }, async (s) => {
        const change = await resendConfirmation(deps.db, deps.secretsKey, s.account.id, deps.clock.now());
        return redirect(`/dashboard/alerts?done=${change === "requested" ? "resent" : DONE_OF[change]}`);
      }),
    )
    .post("/dashboard/alerts/test", ({ request, cookie, body }) =>
      withForm(rd, { request, cookie, body }, async (s) =>
        redirect(
          `/dashboard/alerts?done=${(await queueTestEmail(deps.db, s.account.id, deps.clock.now())) ? "test" : "test-again"}`,
        ),
      ),
    )
    .use(confirmRoutes(rd));
}

/** The link in a confirmation email: a page with a button (a mail scanner's GET confirms nothing), then the POST. */
function confirmRoutes(rd: RouteDeps) {
  const { deps } = rd;
  const noStore = (res: Response) => {
    // The token is in the path: never let it leave in a Referer.
    res.headers.set("referrer-policy", "no-referrer");
    return res;
  };
  const deadLink = () =>
    noStore(
      htmlResponse(
        messagePage(
          "Link not valid",
          "This confirmation link is unknown, already used or expired. Save the address again on the Alerts page for a new one.",
        ),
        404,
      ),
    );
  return new Elysia()
    .get("/dashboard/alerts/confirm/:token", async ({ cookie, params }) => {
      const email = await findAddressLink(deps.db, params.token, deps.clock.now());
      if (!email) return deadLink();
      const action = `/dashboard/alerts/confirm/${params.token}`;
      return noStore(htmlResponse(confirmAddressPage({ action, csrf: preCsrf(cookie), email })));
    })
    .post("/dashboard/alerts/confirm/:token", async ({ request, cookie, params, body }) => {
      if (!preCsrfOk({ request, cookie }, body as FormBody)) return csrfRefused();
      const email = await confirmAddress(deps.db, params.token, deps.clock.now());
      if (!email) return deadLink();
      return noStore(
        htmlResponse(messagePage("Address confirmed", `Alert emails of this account now go to ${email}.`)),
      );
    });
}
