/** "Audit this receiver" (docs/webhooks.md, "Receiver audit"): the API's audit, then back with the report in the query. */
import { Elysia } from "elysia";
import { AppError } from "../../../lib/errors.ts";
import { auditReceiver } from "../../webhooks/audit.ts";
import { requireWebhook, webhookView } from "../../webhooks/service.ts";
import { htmlResponse, pageSession, redirect, withForm, type RouteDeps } from "../http.ts";
import { auditQuery } from "../views/webhook-tools.ts";
import { webhookDetailPage } from "../views/webhooks.ts";
import { recentOf } from "./webhooks.ts";

/** `POST /dashboard/webhooks/:id/audit`; a refused audit (hourly limit, kill-switch) shows on the page with its status. */
export function webhookAuditRoute(rd: RouteDeps) {
  const { deps } = rd;
  return new Elysia().post("/dashboard/webhooks/:id/audit", ({ request, cookie, body, params }) =>
    withForm(rd, { request, cookie, body }, async (s) => {
      try {
        const report = await auditReceiver(deps, rd.sender, s.account.id, params.id);
        return redirect(`/dashboard/webhooks/${params.id}?audit=${encodeURIComponent(auditQuery(report.cases))}`);
      } catch (e) {
        if (e instanceof AppError && (e.code === "RATE_LIMITED" || e.code === "TEST_WEBHOOKS_DISABLED")) {
          const w = webhookView(await requireWebhook(deps.db, s.account.id, params.id));
          const [days, recent] = await recentOf(deps, s.account.id, w.id);
          return htmlResponse(
            webhookDetailPage(pageSession(s), w, days, recent, { kind: "error", text: e.message }),
            e.status,
          );
        }
        throw e;
      }
    }),
  );
}
