/** The Alerts settings page (docs/alerts.md): which owner alerts are emailed, to which address, and a test email. */
import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import { ALERT_KINDS } from "../../alerts/model.ts";
import { queueTestEmail, readAlertSettings, recentAlerts, saveAlertSettings } from "../../alerts/settings.ts";
import {
  htmlResponse,
  pageSession,
  redirect,
  str,
  unreadableFields,
  withForm,
  withSession,
  type RouteDeps,
} from "../http.ts";
import { SignUpForm } from "../model.ts";
import type { DashboardSession } from "../session.ts";
import { alertsPage, type AlertsState } from "../views/alerts.ts";
import type { Flash } from "../views/layout.ts";

const DONE: Record<string, Flash> = {
  saved: { kind: "ok", text: "Alert settings saved." },
  test: { kind: "ok", text: "Test email queued: it goes out within a few seconds." },
  "test-again": { kind: "error", text: "A test email was already queued this minute." },
};

/** Routes for /dashboard/alerts…. */
export function alertRoutes(rd: RouteDeps) {
  const { deps } = rd;
  const page = async (s: DashboardSession, extra: Partial<AlertsState> = {}, status = 200) => {
    const [settings, recent] = await Promise.all([
      readAlertSettings(deps.db, s.account.id),
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
        await saveAlertSettings(deps.db, s.account.id, {
          email: email ? email.toLowerCase() : null,
          disabled: ALERT_KINDS.filter((k) => !kinds.includes(k)),
        });
        return redirect("/dashboard/alerts?done=saved");
      }),
    )
    .post("/dashboard/alerts/test", ({ request, cookie, body }) =>
      withForm(rd, { request, cookie, body }, async (s) =>
        redirect(
          `/dashboard/alerts?done=${(await queueTestEmail(deps.db, s.account.id, deps.clock.now())) ? "test" : "test-again"}`,
        ),
      ),
    );
}
