/**
 * Webhook pages. Every action goes through the webhooks service
 * (`webhooks/service.ts`, `webhooks/test-fire.ts`), which scopes each id to
 * the signed-in account: another account's webhook is "not found".
 * Forms are validated with the API's own body schemas.
 */
import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import { AppError, RequestValidationError } from "../../../errors.ts";
import { planOf } from "../../billing/plans.ts";
import { CreateWebhookBody, UpdateWebhookBody, type CreateWebhookInput, type UpdateWebhookInput } from "../../webhooks/model.ts";
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, requireWebhook, rotateSecret, updateWebhook, webhookView } from "../../webhooks/service.ts";
import { testFire } from "../../webhooks/test-fire.ts";
import { htmlResponse, pageSession, redirect, str, withForm, withSession, type FormBody, type RouteDeps } from "../http.ts";
import { deliveriesPerDay } from "../service.ts";
import type { DashboardSession } from "../session.ts";
import type { Flash } from "../views/layout.ts";
import { confirmPage, secretPage, webhookDetailPage, webhookFormPage, webhooksListPage, type WebhookFormValues } from "../views/webhooks.ts";

/** Recent deliveries shown per webhook (CONTRACT 7). */
export const RECENT_DELIVERIES = 50;

const FIELD_MSG: Record<string, string> = {
  url: "Enter an https URL of at most 2,048 characters.",
  events: "Choose at least one event.",
  mode: "Choose test or live.",
  description: "Use at most 500 characters.",
};

function formValues(form: FormBody): WebhookFormValues {
  return { url: str(form, "url").trim(), description: str(form, "description").trim(), mode: str(form, "mode"), events: form.events ?? [] };
}

/** Same schema as the API; field messages for the form. */
function schemaErrors(schema: typeof CreateWebhookBody | typeof UpdateWebhookBody, input: unknown): Record<string, string> | undefined {
  if (Value.Check(schema, input)) return undefined;
  const errors: Record<string, string> = {};
  for (const e of Value.Errors(schema, input)) {
    const field = e.path.split("/")[1] ?? "form";
    errors[field] = FIELD_MSG[field] ?? "Check this value.";
  }
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
};

function testFlash(q: Record<string, string | undefined>): Flash | undefined {
  if (q.fired !== "ok" && q.fired !== "failed") return undefined;
  const code = /^\d{3}$/.test(q.code ?? "") ? ` with HTTP ${q.code}` : " without an HTTP response";
  const ms = /^\d{1,7}$/.test(q.ms ?? "") ? ` in ${q.ms} ms` : "";
  return q.fired === "ok" ? { kind: "ok", text: `Test delivery delivered${code}${ms}.` } : { kind: "error", text: `Test delivery failed${code}${ms}. See the attempt below.` };
}

/** Routes for the webhook pages. */
export function webhookRoutes(rd: RouteDeps) {
  const { deps } = rd;
  const liveAllowed = (s: DashboardSession) => planOf(s.account.plan).live_webhooks;
  const caller = (s: DashboardSession) => ({ id: s.account.id, plan: s.account.plan });

  return new Elysia()
    .get("/dashboard/webhooks", ({ request, query }) =>
      withSession(rd, request, async (s) =>
        htmlResponse(webhooksListPage(pageSession(s), await listWebhooks(deps.db, s.account.id), { liveAllowed: liveAllowed(s), flash: query.done ? DONE[query.done] : undefined })),
      ),
    )
    .get("/dashboard/webhooks/new", ({ request }) =>
      withSession(rd, request, (s) =>
        htmlResponse(webhookFormPage(pageSession(s), { url: "", description: "", mode: "test", events: ["tracking.delivered"] }, { liveAllowed: liveAllowed(s) })),
      ),
    )
    .post("/dashboard/webhooks", ({ request, body }) =>
      withForm(rd, request, body as FormBody, async (s, form) => {
        const v = formValues(form);
        const input = { url: v.url, events: v.events, mode: v.mode, description: v.description || null };
        const bad = (errors: Record<string, string>) => htmlResponse(webhookFormPage(pageSession(s), v, { errors, liveAllowed: liveAllowed(s) }), 422);
        const errs = schemaErrors(CreateWebhookBody, input);
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
    .get("/dashboard/webhooks/rotate-secret", ({ request }) =>
      withSession(rd, request, (s) =>
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
    .post("/dashboard/webhooks/rotate-secret", ({ request, body }) =>
      withForm(rd, request, body as FormBody, async (s) => htmlResponse(secretPage(pageSession(s), await rotateSecret(deps, s.account.id), { rotated: true }))),
    )
    .get("/dashboard/webhooks/:id", ({ request, params, query }) =>
      withSession(rd, request, async (s) => {
        const w = webhookView(await requireWebhook(deps.db, s.account.id, params.id));
        const [days, recent] = await Promise.all([
          deliveriesPerDay(deps.db, s.account.id, w.id, deps.clock.now()),
          listDeliveries(deps.db, s.account.id, w.id, { limit: RECENT_DELIVERIES }),
        ]);
        const flash = testFlash(query) ?? (query.done ? DONE[query.done] : undefined);
        return htmlResponse(webhookDetailPage(pageSession(s), w, days, recent.deliveries, flash));
      }),
    )
    .get("/dashboard/webhooks/:id/edit", ({ request, params }) =>
      withSession(rd, request, async (s) => {
        const w = webhookView(await requireWebhook(deps.db, s.account.id, params.id));
        return htmlResponse(webhookFormPage(pageSession(s), { url: w.url, description: w.description ?? "", mode: w.mode, events: w.events }, { id: w.id, liveAllowed: liveAllowed(s) }));
      }),
    )
    .post("/dashboard/webhooks/:id", ({ request, body, params }) =>
      withForm(rd, request, body as FormBody, async (s, form) => {
        await requireWebhook(deps.db, s.account.id, params.id);
        const v = formValues(form);
        const input = { url: v.url, events: v.events, mode: v.mode, description: v.description || null };
        const bad = (errors: Record<string, string>) => htmlResponse(webhookFormPage(pageSession(s), v, { id: params.id, errors, liveAllowed: liveAllowed(s) }), 422);
        const errs = schemaErrors(UpdateWebhookBody, input);
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
    )
    .get("/dashboard/webhooks/:id/delete", ({ request, params }) =>
      withSession(rd, request, async (s) => {
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
    .post("/dashboard/webhooks/:id/delete", ({ request, body, params }) =>
      withForm(rd, request, body as FormBody, async (s) => {
        await deleteWebhook(deps.db, s.account.id, params.id);
        return redirect("/dashboard/webhooks?done=deleted");
      }),
    )
    .post("/dashboard/webhooks/:id/test", ({ request, body, params }) =>
      withForm(rd, request, body as FormBody, async (s) => {
        try {
          const r = await testFire(deps, rd.sender, s.account.id, params.id);
          return redirect(`/dashboard/webhooks/${params.id}?fired=${r.delivered ? "ok" : "failed"}&code=${r.status_code ?? ""}&ms=${r.attempt_ms}`);
        } catch (e) {
          if (e instanceof AppError && (e.code === "WEBHOOK_IS_LIVE" || e.code === "TEST_WEBHOOKS_DISABLED")) {
            const w = webhookView(await requireWebhook(deps.db, s.account.id, params.id));
            const [days, recent] = await Promise.all([deliveriesPerDay(deps.db, s.account.id, w.id, deps.clock.now()), listDeliveries(deps.db, s.account.id, w.id, { limit: RECENT_DELIVERIES })]);
            return htmlResponse(webhookDetailPage(pageSession(s), w, days, recent.deliveries, { kind: "error", text: e.message }), e.status);
          }
          throw e;
        }
      }),
    )
    .post("/dashboard/webhooks/:id/reactivate", ({ request, body, params }) =>
      withForm(rd, request, body as FormBody, async (s) => {
        await updateWebhook(deps, caller(s), params.id, { status: "active" });
        return redirect(`/dashboard/webhooks/${params.id}?done=reactivated`);
      }),
    );
}
