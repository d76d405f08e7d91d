/** Webhook pages, through the webhooks service (ids scoped to the account) and the API's own body schemas. */
import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import { AppError, RequestValidationError } from "../../../errors.ts";
import { planOf } from "../../../domain/plans.ts";
import { CreateWebhookBody, UpdateWebhookBody, type CreateWebhookInput, type UpdateWebhookInput } from "../../webhooks/model.ts";
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, requireWebhook, rotateSecret, updateWebhook, webhookView } from "../../webhooks/service.ts";
import { testFire } from "../../webhooks/test-fire.ts";
import { recover, redeliver } from "../../webhooks/replay.ts";
import { RECOVER_WINDOWS } from "../views/replay.ts";
import { htmlResponse, pageSession, redirect, str, unreadableFields, withForm, withSession, type FormBody, type RouteDeps } from "../http.ts";
import { webhookUrlProblems } from "../../webhooks/url.ts";
import { shipmentsOfDeliveries } from "../delivery-shipments.ts";
import { deliveriesPerDay } from "../service.ts";
import type { DashboardSession } from "../session.ts";
import type { Flash } from "../views/layout.ts";
import { auditOf, deliveryFilterOf, type DeliveryFilterForm } from "../views/webhook-tools.ts";
import { headersFromForm, type HeadersFromForm } from "./webhook-headers.ts";
import { openHeaders } from "../../webhooks/headers.ts";
import { confirmPage, secretPage, webhookDetailPage, webhookFormPage, webhooksListPage, type WebhookFormValues } from "../views/webhooks.ts";

/** Recent deliveries shown per webhook (the attempt log keeps the last 50, docs/webhooks.md). */
export const RECENT_DELIVERIES = 50;

const FIELD_MSG: Record<string, string> = {
  url: "Enter an https URL of at most 2,048 characters.",
  events: "Choose at least one event.",
  mode: "Choose test or live.",
  description: "Use at most 500 characters.",
  headers: "Header values: visible ASCII (spaces inside only), at most 1,000 characters; at most 5 headers.",
};

function formValues(form: FormBody, h: HeadersFromForm): WebhookFormValues {
  return { url: str(form, "url").trim(), description: str(form, "description").trim(), mode: str(form, "mode"), events: form.events ?? [], headers: h.rows };
}

const headerRows = (masked: Record<string, string>) => Object.entries(masked).map(([name, m]) => ({ name, masked: m }));

/** Unreadable text (NUL, invalid UTF-8) first, then the API's own schema; field messages for the form. */
function schemaErrors(schema: typeof CreateWebhookBody | typeof UpdateWebhookBody, input: unknown, form: FormBody): Record<string, string> | undefined {
  const unreadable = unreadableFields(form, ["url", "events", "mode", "description", "header_name", "header_value"]);
  if (unreadable) return unreadable;
  if (Value.Check(schema, input)) return undefined;
  const errors: Record<string, string> = {};
  for (const e of Value.Errors(schema, input)) {
    const field = e.path.split("/")[1] ?? "form";
    errors[field] = FIELD_MSG[field] ?? "Check this value.";
  }
  // The schema's URL pattern encodes the URL rules; the rules' own message says which one failed.
  const rule = errors.url ? webhookUrlProblems(input, [])[0] : undefined;
  if (rule) errors.url = rule.msg;
  return errors;
}

/** Service failures that the form can show next to a field or on top. */
function serviceErrors(e: unknown): Record<string, string> | undefined {
  if (e instanceof RequestValidationError) return Object.fromEntries(e.items.map((i) => [String(i.loc[1] ?? "form"), i.msg]));
  if (e instanceof AppError && (e.code === "PLAN_UPGRADE_REQUIRED" || e.code === "WEBHOOK_LIMIT_REACHED")) return { form: e.message };
  return undefined;
}

const DONE: Record<string, Flash> = {
  created: { kind: "ok", text: "Webhook created. It is signed with your account's existing signing secret." },
  saved: { kind: "ok", text: "Changes saved." },
  deleted: { kind: "ok", text: "Webhook deleted." },
  reactivated: { kind: "ok", text: "Webhook reactivated; the failure count restarts at 0." },
  redelivered: { kind: "ok", text: "Redelivery queued: it is sent within seconds and appears below." },
};

/** Flash after a recover: how many deliveries were queued. */
function recoverFlash(q: Record<string, string | undefined>): Flash | undefined {
  if (!/^\d{1,9}$/.test(q.recovered ?? "")) return undefined;
  const n = Number(q.recovered);
  return { kind: "ok", text: n === 0 ? "No abandoned or dropped deliveries in that window." : `${n} deliver${n === 1 ? "y" : "ies"} queued again.` };
}

function testFlash(q: Record<string, string | undefined>): Flash | undefined {
  if (q.fired !== "ok" && q.fired !== "failed") return undefined;
  const code = /^\d{3}$/.test(q.code ?? "") ? ` with HTTP ${q.code}` : " without an HTTP response";
  const ms = /^\d{1,7}$/.test(q.ms ?? "") ? ` in ${q.ms} ms` : "";
  return q.fired === "ok" ? { kind: "ok", text: `Test delivery delivered${code}${ms}.` } : { kind: "error", text: `Test delivery failed${code}${ms}. See the attempt below.` };
}

const liveAllowed = (s: DashboardSession) => planOf(s.account.plan).live_webhooks;
const caller = (s: DashboardSession) => ({ id: s.account.id, plan: s.account.plan });

/** The 14-day chart and the recent deliveries of one webhook (filtered; days are UTC, `until` inclusive), each with its shipment. */
export async function recentOf(deps: RouteDeps["deps"], accountId: string, webhookId: string, f: DeliveryFilterForm = {}) {
  const filter = { limit: RECENT_DELIVERIES, status: f.status, event_type: f.event_type, since: f.since && `${f.since}T00:00:00Z`, until: f.until && new Date(Date.parse(`${f.until}T00:00:00Z`) + 86_400_000).toISOString() };
  const [days, recent] = await Promise.all([deliveriesPerDay(deps.db, accountId, webhookId, deps.clock.now()), listDeliveries(deps.db, accountId, webhookId, filter)]);
  const about = await shipmentsOfDeliveries(deps.db, recent.deliveries.map((d) => d.id));
  return [days, recent.deliveries.map((d) => ({ ...d, shipment: about.get(d.id) }))] as const;
}

/** Routes for the webhook pages: the list and the create/edit forms, then one webhook's page and its actions. */
export function webhookRoutes(rd: RouteDeps) {
  return new Elysia().use(webhookFormRoutes(rd)).use(webhookActionRoutes(rd));
}

/** The list, the create and edit forms, and the secret rotation. */
function webhookFormRoutes(rd: RouteDeps) {
  const { deps } = rd;
  return new Elysia()
    .get("/dashboard/webhooks", ({ request, cookie, query }) =>
      withSession(rd, { request, cookie }, async (s) =>
        htmlResponse(webhooksListPage(pageSession(s), await listWebhooks(deps.db, s.account.id), { liveAllowed: liveAllowed(s), flash: query.done ? DONE[query.done] : undefined })),
      ),
    )
    .get("/dashboard/webhooks/new", ({ request, cookie }) =>
      withSession(rd, { request, cookie }, (s) =>
        htmlResponse(webhookFormPage(pageSession(s), { url: "", description: "", mode: "test", events: ["tracking.delivered"], headers: [] }, { liveAllowed: liveAllowed(s) })),
      ),
    )
    .post("/dashboard/webhooks", ({ request, cookie, body }) =>
      withForm(rd, { request, cookie, body }, async (s, form) => {
        const h = headersFromForm(form);
        const v = formValues(form, h);
        const input = { url: v.url, events: v.events, mode: v.mode, description: v.description || null, ...(Object.keys(h.headers).length ? { headers: h.headers } : {}) };
        const bad = (errors: Record<string, string>) => htmlResponse(webhookFormPage(pageSession(s), v, { errors, liveAllowed: liveAllowed(s) }), 422);
        const errs = schemaErrors(CreateWebhookBody, input, form) ?? (h.error ? { headers: h.error } : undefined);
        if (errs) return bad(errs);
        try {
          const created = await createWebhook(deps, caller(s), input as CreateWebhookInput);
          // The raw secret comes back only on the account's first secret; show it once, here.
          if (!created.secret.startsWith("<")) return htmlResponse(secretPage(pageSession(s), created.secret, { webhookId: created.id, rotated: false }), 201);
          return redirect(`/dashboard/webhooks/${created.id}?done=created`);
        } catch (e) {
          const se = serviceErrors(e);
          if (!se) throw e;
          return bad(se);
        }
      }),
    )
    .get("/dashboard/webhooks/rotate-secret", ({ request, cookie }) =>
      withSession(rd, { request, cookie }, (s) =>
        htmlResponse(
          confirmPage(pageSession(s), {
            title: "Rotate the signing secret?",
            text: "A new secret replaces the current one for all your webhooks at once, and is shown once. Update your receivers to accept the new secret; keep accepting the old one for at least 15 minutes.",
            action: "/dashboard/webhooks/rotate-secret",
            button: "Rotate the secret",
            cancel: "/dashboard/webhooks",
          }),
        ),
      ),
    )
    .post("/dashboard/webhooks/rotate-secret", ({ request, cookie, body }) =>
      withForm(rd, { request, cookie, body }, async (s) => htmlResponse(secretPage(pageSession(s), await rotateSecret(deps, s.account.id), { rotated: true }))),
    )
    .get("/dashboard/webhooks/:id/edit", ({ request, cookie, params }) =>
      withSession(rd, { request, cookie }, async (s) => {
        const w = webhookView(await requireWebhook(deps.db, s.account.id, params.id));
        return htmlResponse(webhookFormPage(pageSession(s), { url: w.url, description: w.description ?? "", mode: w.mode, events: w.events, headers: headerRows(w.headers) }, { id: w.id, liveAllowed: liveAllowed(s) }));
      }),
    )
    .post("/dashboard/webhooks/:id", ({ request, cookie, body, params }) =>
      withForm(rd, { request, cookie, body }, async (s, form) => {
        const row = await requireWebhook(deps.db, s.account.id, params.id);
        const h = headersFromForm(form, openHeaders(deps.secretsKey, row.id, row.headersEnc), row.headersMasked ?? {});
        const v = formValues(form, h);
        const input = { url: v.url, events: v.events, mode: v.mode, description: v.description || null, headers: h.headers };
        const bad = (errors: Record<string, string>) => htmlResponse(webhookFormPage(pageSession(s), v, { id: params.id, errors, liveAllowed: liveAllowed(s) }), 422);
        const errs = schemaErrors(UpdateWebhookBody, input, form) ?? (h.error ? { headers: h.error } : undefined);
        if (errs) return bad(errs);
        try {
          await updateWebhook(deps, caller(s), params.id, input as UpdateWebhookInput);
          return redirect(`/dashboard/webhooks/${params.id}?done=saved`);
        } catch (e) {
          const se = serviceErrors(e);
          if (!se) throw e;
          return bad(se);
        }
      }),
    );
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
        return htmlResponse(webhookDetailPage(pageSession(s), w, days, recent, flash, { filter, audit: auditOf(query) }));
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
          return redirect(`/dashboard/webhooks/${params.id}?fired=${r.delivered ? "ok" : "failed"}&code=${r.status_code ?? ""}&ms=${r.attempt_ms}`);
        } catch (e) {
          if (e instanceof AppError && (e.code === "WEBHOOK_IS_LIVE" || e.code === "TEST_WEBHOOKS_DISABLED")) {
            const w = webhookView(await requireWebhook(deps.db, s.account.id, params.id));
            const [days, recent] = await recentOf(deps, s.account.id, w.id);
            return htmlResponse(webhookDetailPage(pageSession(s), w, days, recent, { kind: "error", text: e.message }), e.status);
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
