/** The webhook list and its create and edit forms, checked with the API's own body schemas. */
import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import { AppError, RequestValidationError } from "../../../lib/errors.ts";
import { planOf } from "../../../domain/plans.ts";
import {
  CreateWebhookBody,
  UpdateWebhookBody,
  type CreateWebhookInput,
  type UpdateWebhookInput,
} from "../../webhooks/model.ts";
import {
  createWebhook,
  listWebhooks,
  requireWebhook,
  rotateSecret,
  updateWebhook,
  webhookView,
} from "../../webhooks/service.ts";
import {
  htmlResponse,
  pageSession,
  redirect,
  str,
  unreadableFields,
  withForm,
  withSession,
  type FormBody,
  type RouteDeps,
} from "../http.ts";
import { webhookUrlProblems } from "../../webhooks/url.ts";
import type { DashboardSession } from "../session.ts";
import type { Flash } from "../views/layout.ts";
import { headersFromForm, type HeadersFromForm } from "./webhook-headers.ts";
import { openHeaders } from "../../webhooks/headers.ts";
import {
  confirmPage,
  secretPage,
  webhookFormPage,
  webhooksListPage,
  type WebhookFormValues,
} from "../views/webhooks.ts";

const FIELD_MSG: Record<string, string> = {
  url: "Enter an https URL of at most 2,048 characters.",
  events: "Choose at least one event.",
  mode: "Choose test or live.",
  description: "Use at most 500 characters.",
  headers: "Header values: visible ASCII (spaces inside only), at most 1,000 characters; at most 5 headers.",
};

function formValues(form: FormBody, h: HeadersFromForm): WebhookFormValues {
  return {
    url: str(form, "url").trim(),
    description: str(form, "description").trim(),
    mode: str(form, "mode"),
    events: form.events ?? [],
    headers: h.rows,
  };
}

const headerRows = (masked: Record<string, string>) => Object.entries(masked).map(([name, m]) => ({ name, masked: m }));

/** Unreadable text (NUL, invalid UTF-8) first, then the API's own schema; field messages for the form. */
function schemaErrors(
  schema: typeof CreateWebhookBody | typeof UpdateWebhookBody,
  input: unknown,
  form: FormBody,
): Record<string, string> | undefined {
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
  if (e instanceof RequestValidationError)
    return Object.fromEntries(e.items.map((i) => [String(i.loc[1] ?? "form"), i.msg]));
  if (e instanceof AppError && (e.code === "PLAN_UPGRADE_REQUIRED" || e.code === "WEBHOOK_LIMIT_REACHED"))
    return { form: e.message };
  return undefined;
}

/** Flash messages after an action, by its `done` query value. */
export const DONE: Record<string, Flash> = {
  created: { kind: "ok", text: "Webhook created. It is signed with your account's existing signing secret." },
  saved: { kind: "ok", text: "Changes saved." },
  deleted: { kind: "ok", text: "Webhook deleted." },
  reactivated: { kind: "ok", text: "Webhook reactivated; the failure count restarts at 0." },
  redelivered: { kind: "ok", text: "Redelivery queued: it is sent within seconds and appears below." },
};

const liveAllowed = (s: DashboardSession) => planOf(s.account.plan).live_webhooks;
export const caller = (s: DashboardSession) => ({ id: s.account.id, plan: s.account.plan });

/** The list, the create and edit forms, and the secret rotation. */
export function webhookFormRoutes(rd: RouteDeps) {
  return new Elysia().use(webhookCreateRoutes(rd)).use(webhookEditRoutes(rd));
}

function webhookCreateRoutes(rd: RouteDeps) {
  const { deps } = rd;
  return new Elysia()
    .get("/dashboard/webhooks", ({ request, cookie, query }) =>
      withSession(rd, { request, cookie }, async (s) =>
        htmlResponse(
          webhooksListPage(pageSession(s), await listWebhooks(deps.db, s.account.id), {
            liveAllowed: liveAllowed(s),
            flash: query.done ? DONE[query.done] : undefined,
          }),
        ),
      ),
    )
    .get("/dashboard/webhooks/new", ({ request, cookie }) =>
      withSession(rd, { request, cookie }, (s) =>
        htmlResponse(
          webhookFormPage(
            pageSession(s),
            { url: "", description: "", mode: "test", events: ["tracking.delivered"], headers: [] },
            { liveAllowed: liveAllowed(s) },
          ),
        ),
      ),
    )
    .post("/dashboard/webhooks", ({ request, cookie, body }) =>
      withForm(rd, { request, cookie, body }, async (s, form) => {
        const h = headersFromForm(form);
        const v = formValues(form, h);
        const input = {
          url: v.url,
          events: v.events,
          mode: v.mode,
          description: v.description || null,
          ...(Object.keys(h.headers).length ? { headers: h.headers } : {}),
        };
        const bad = (errors: Record<string, string>) =>
          htmlResponse(webhookFormPage(pageSession(s), v, { errors, liveAllowed: liveAllowed(s) }), 422);
        const errs = schemaErrors(CreateWebhookBody, input, form) ?? (h.error ? { headers: h.error } : undefined);
        if (errs) return bad(errs);
        try {
          const created = await createWebhook(deps, caller(s), input as CreateWebhookInput);
          // The raw secret comes back only on the account's first secret; show it once, here.
          if (!created.secret.startsWith("<"))
            return htmlResponse(
              secretPage(pageSession(s), created.secret, { webhookId: created.id, rotated: false }),
              201,
            );
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
      withForm(rd, { request, cookie, body }, async (s) =>
        htmlResponse(secretPage(pageSession(s), await rotateSecret(deps, s.account.id), { rotated: true })),
      ),
    );
}

function webhookEditRoutes(rd: RouteDeps) {
  const { deps } = rd;
  return new Elysia()
    .get("/dashboard/webhooks/:id/edit", ({ request, cookie, params }) =>
      withSession(rd, { request, cookie }, async (s) => {
        const w = webhookView(await requireWebhook(deps.db, s.account.id, params.id));
        return htmlResponse(
          webhookFormPage(
            pageSession(s),
            {
              url: w.url,
              description: w.description ?? "",
              mode: w.mode,
              events: w.events,
              headers: headerRows(w.headers),
            },
            { id: w.id, liveAllowed: liveAllowed(s) },
          ),
        );
      }),
    )
    .post("/dashboard/webhooks/:id", ({ request, cookie, body, params }) =>
      withForm(rd, { request, cookie, body }, async (s, form) => {
        const row = await requireWebhook(deps.db, s.account.id, params.id);
        const h = headersFromForm(form, openHeaders(deps.secretsKey, row.id, row.headersEnc), row.headersMasked ?? {});
        const v = formValues(form, h);
        const input = {
          url: v.url,
          events: v.events,
          mode: v.mode,
          description: v.description || null,
          headers: h.headers,
        };
        const bad = (errors: Record<string, string>) =>
          htmlResponse(webhookFormPage(pageSession(s), v, { id: params.id, errors, liveAllowed: liveAllowed(s) }), 422);
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
