/** Webhook pages, through the webhooks service (ids scoped to the account) and the API's own body schemas. */
import { Elysia } from "elysia";
import { AppError } from "../../../lib/errors.ts";
import { deleteWebhook, listDeliveries, requireWebhook, updateWebhook, webhookView } from "../../webhooks/service.ts";
import { testFire } from "../../webhooks/test-fire.ts";
import { recover, redeliver } from "../../webhooks/replay.ts";
import { RECOVER_WINDOWS } from "../views/replay.ts";
import { htmlResponse, pageSession, redirect, str, withForm, withSession, type RouteDeps } from "../http.ts";
import { shipmentsOfDeliveries } from "../delivery-shipments.ts";
import { deliveriesPerDay } from "../service.ts";
import type { Flash } from "../views/layout.ts";
import { auditOf, deliveryFilterOf, type DeliveryFilterForm } from "../views/webhook-tools.ts";
import { confirmPage, webhookDetailPage } from "../views/webhooks.ts";
import { caller, DONE, webhookFormRoutes } from "./webhook-forms.ts";

/** Recent deliveries shown per webhook (the attempt log keeps the last 50, docs/webhooks.md). */
const RECENT_DELIVERIES = 50;

/** Flash after a recover: how many deliveries were queued. */
function recoverFlash(q: Record<string, string | undefined>): Flash | undefined {
  if (!/^\d{1,9}$/.test(q.recovered ?? "")) return undefined;
  const n = Number(q.recovered);
  return {
    kind: "ok",
    text:
      n === 0
        ? "No abandoned or dropped deliveries in that window."
        : `${n} deliver${n === 1 ? "y" : "ies"} queued again.`,
  };
}

function testFlash(q: Record<string, string | undefined>): Flash | undefined {
  if (q.fired !== "ok" && q.fired !== "failed") return undefined;
  const code = /^\d{3}$/.test(q.code ?? "") ? ` with HTTP ${q.code}` : " without an HTTP response";
  const ms = /^\d{1,7}$/.test(q.ms ?? "") ? ` in ${q.ms} ms` : "";
  return q.fired === "ok"
    ? { kind: "ok", text: `Test delivery delivered${code}${ms}.` }
    : { kind: "error", text: `Test delivery failed${code}${ms}. See the attempt below.` };
}

/** The 14-day chart and the recent deliveries of one webhook (filtered; days are UTC, `until` inclusive), each with its shipment. */
export async function recentOf(
  deps: RouteDeps["deps"],
  accountId: string,
  webhookId: string,
  f: DeliveryFilterForm = {},
) {
  const filter = {
    limit: RECENT_DELIVERIES,
    status: f.status,
    event_type: f.event_type,
    since: f.since && `${f.since}T00:00:00Z`,
    until: f.until && new Date(Date.parse(`${f.until}T00:00:00Z`) + 86_400_000).toISOString(),
  };
  const [days, recent] = await Promise.all([
    deliveriesPerDay(deps.db, accountId, webhookId, deps.clock.now()),
    listDeliveries(deps.db, accountId, webhookId, filter),
  ]);
  const about = await shipmentsOfDeliveries(
    deps.db,
    recent.deliveries.map((d) => d.id),
  );
  return [days, recent.deliveries.map((d) => ({ ...d, shipment: about.get(d.id) }))] as const;
}

/** Routes for the webhook pages: the list and the create/edit forms, then one webhook's page and its actions. */
export function webhookRoutes(rd: RouteDeps) {
  return new Elysia().use(webhookFormRoutes(rd)).use(webhookActionRoutes(rd));
}

/** One webhook's page, its deletion, a test fire, redelivery, recovery and reactivation. */
function webhookActionRoutes(rd: RouteDeps) {
  const { deps } = rd;
  return new Elysia()
    .get("/dashboard/webhooks/:id", ({ request, cookie, params, query }) =>
      withSession(rd, { request, cookie }, async (s) => {
        const w = webhookView(await requireWebhook(deps.db, s.account.id, params.id));
        const filter = deliveryFilterOf(query);
        const [days, recent] = await recentOf(deps, s.account.id, w.id, filter);
        const flash = testFlash(query) ?? recoverFlash(query) ?? (query.done ? DONE[query.done] : undefined);
        return htmlResponse(
          webhookDetailPage(pageSession(s), w, days, recent, flash, { filter, audit: auditOf(query) }),
        );
      }),
    )
    .get("/dashboard/webhooks/:id/delete", ({ request, cookie, params }) =>
      withSession(rd, { request, cookie }, async (s) => {
        const w = await requireWebhook(deps.db, s.account.id, params.id);
        return htmlResponse(
          confirmPage(pageSession(s), {
            title: "Delete this webhook?",
            text: `The webhook for ${w.url} and its delivery history will be deleted; pending deliveries are not sent.`,
            action: `/dashboard/webhooks/${w.id}/delete`,
            button: "Delete webhook",
            cancel: `/dashboard/webhooks/${w.id}`,
          }),
        );
      }),
    )
    .post("/dashboard/webhooks/:id/delete", ({ request, cookie, body, params }) =>
      withForm(rd, { request, cookie, body }, async (s) => {
        await deleteWebhook(deps.db, s.account.id, params.id);
        return redirect("/dashboard/webhooks?done=deleted");
      }),
    )
    .post("/dashboard/webhooks/:id/test", ({ request, cookie, body, params }) =>
      withForm(rd, { request, cookie, body }, async (s) => {
        try {
          const r = await testFire(deps, rd.sender, s.account.id, params.id);
          return redirect(
            `/dashboard/webhooks/${params.id}?fired=${r.delivered ? "ok" : "failed"}&code=${r.status_code ?? ""}&ms=${r.attempt_ms}`,
          );
        } catch (e) {
          if (e instanceof AppError && (e.code === "WEBHOOK_IS_LIVE" || e.code === "TEST_WEBHOOKS_DISABLED")) {
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
    )
    .post("/dashboard/webhooks/:id/deliveries/:delivery/redeliver", ({ request, cookie, body, params }) =>
      withForm(rd, { request, cookie, body }, async (s) => {
        await redeliver(deps, s.account.id, params.id, params.delivery);
        return redirect(`/dashboard/webhooks/${params.id}?done=redelivered`);
      }),
    )
    .post("/dashboard/webhooks/:id/recover", ({ request, cookie, body, params }) =>
      withForm(rd, { request, cookie, body }, async (s, form) => {
        const hours = RECOVER_WINDOWS.find((w) => String(w.hours) === str(form, "hours"))?.hours ?? 24;
        const n = await recover(deps, s.account.id, params.id, deps.clock.now() - hours * 3600_000);
        return redirect(`/dashboard/webhooks/${params.id}?recovered=${n}`);
      }),
    )
    .post("/dashboard/webhooks/:id/reactivate", ({ request, cookie, body, params }) =>
      withForm(rd, { request, cookie, body }, async (s) => {
        await updateWebhook(deps, caller(s), params.id, { status: "active" });
        return redirect(`/dashboard/webhooks/${params.id}?done=reactivated`);
      }),
    );
}
