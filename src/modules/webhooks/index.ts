/**
 * The `/v1/webhooks…` routes (spec: Endpoints; docs/webhooks.md). Every route
 * needs an API key; other accounts' ids answer 404 WEBHOOK_NOT_FOUND.
 */
import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AppDeps } from "../../deps.ts";
import { authPlugin } from "../../http/auth.ts";
import { jsonBodies } from "../../http/body.ts";
import { idempotent } from "../../http/idempotency.ts";
import type { Resolver } from "./delivery/address-guard.ts";
import { webhookDeliveries } from "./delivery-routes.ts";
import { E, errs, notFound, tags } from "./route-responses.ts";
import { WebhookIdParams, webhookModels } from "./model.ts";
import { reportBodyItems } from "../../http/validation.ts";
import { webhookUrlProblems } from "./url.ts";
import { sandboxEcho } from "../postman/echo.ts";
import {
  createWebhook,
  deleteWebhook,
  listWebhooks,
  MAX_WEBHOOKS,
  requireWebhook,
  rotateSecret,
  updateWebhook,
  webhookView,
} from "./service.ts";
import { customHeaderProblems } from "./headers.ts";

const CREATE_DETAIL = {
  operationId: "createWebhook",
  summary: "Create a webhook",
  description:
    "Creates a webhook for an https URL (host name or public IP) and a non-empty set of events. `test` webhooks are allowed on every plan and receive only test fires; `live` webhooks receive real events and need the Growth or Business plan. The account has one signing secret: `secret` holds it raw only in the response that generated it (the account's first create, unless a rotation came first); otherwise a notice beginning with `<`. At most 10 webhooks per account.",
  tags,
};

/** The `/v1/webhooks…` routes: managing webhooks, then test fires and the delivery log. */
export function webhooksModule(deps: AppDeps & { resolver?: Resolver }) {
  return new Elysia().use(webhookManagement(deps)).use(webhookDeliveries(deps));
}

// The URL rules run beside the body schema, so one 422 lists every problem (the URL's included).
const urlRulesOf =
  (deps: AppDeps) =>
  ({ body, request }: { body: unknown; request: Request }) =>
    reportBodyItems(request, [
      ...webhookUrlProblems(body, deps.config.webhookAllowPrivateCidrs, sandboxEcho(deps.config)?.url),
      ...customHeaderProblems(body),
    ]);

/** Create, list, rotate the secret, get, update, delete. */
function webhookManagement(deps: AppDeps) {
  return new Elysia().use(webhookCreation(deps)).use(webhookById(deps));
}

/** Create, list, rotate the secret. */
function webhookCreation(deps: AppDeps) {
  const urlRules = urlRulesOf(deps);
  return (
    new Elysia({ prefix: "/v1/webhooks", tags })
      .use(jsonBodies())
      .use(webhookModels)
      .use(authPlugin(deps))
      .post(
        "/",
        (c) =>
          idempotent(deps, c, async () => {
            const data = await createWebhook(deps, c.auth.account, c.body);
            c.set.status = 201;
            return { success: true as const, data };
          }),
        {
          apiKey: true,
          transform: urlRules,
          body: "WebhookCreate",
          response: {
            201: "CreatedWebhookResponse",
            403: E("A live webhook needs the Growth or Business plan.", ["PLAN_UPGRADE_REQUIRED"]),
            409: E(`The account already has ${MAX_WEBHOOKS} webhooks.`, ["WEBHOOK_LIMIT_REACHED"]),
            ...errs,
          },
          // A copy per app: Elysia merges the apiKey macro's `security` into the route's detail object in place.
          detail: { ...CREATE_DETAIL },
        },
      )
      .get(
        "/",
        async ({ auth }) => {
          const list = await listWebhooks(deps.db, auth.account.id);
          return { success: true as const, data: { webhooks: list, count: list.length } };
        },
        {
          apiKey: true,
          response: { 200: "WebhookList", ...errs },
          detail: {
            operationId: "listWebhooks",
            summary: "List webhooks",
            description: "The account's webhooks, oldest first, without secrets.",
            tags,
          },
        },
      )
      // Declared before the `/:webhook_id` routes so `rotate-secret` is never read as an id.
      .post(
        "/rotate-secret",
        (c) =>
          idempotent(deps, c, async () => ({
            success: true as const,
            data: { secret: await rotateSecret(deps, c.auth.account.id) },
          })),
        {
          apiKey: true,
          response: { 200: "SecretResponse", ...errs },
          detail: {
            operationId: "rotateWebhookSecret",
            summary: "Rotate the signing secret",
            description:
              "Replaces the account's signing secret for all its webhooks at once: every delivery attempted after this call is signed with the new secret. The new secret is returned once. Receivers should accept the old and the new secret for at least 15 minutes.",
            tags,
          },
        },
      )
  );
}

/** Get, update, delete one webhook. */
function webhookById(deps: AppDeps) {
  const urlRules = urlRulesOf(deps);
  return new Elysia({ prefix: "/v1/webhooks", tags })
    .use(jsonBodies())
    .use(webhookModels)
    .use(authPlugin(deps))
    .get(
      "/:webhook_id",
      async ({ auth, params }) => ({
        success: true as const,
        data: webhookView(await requireWebhook(deps.db, auth.account.id, params.webhook_id)),
      }),
      {
        apiKey: true,
        params: WebhookIdParams,
        response: { 200: "WebhookResponse", ...notFound, ...errs },
        detail: {
          operationId: "getWebhook",
          summary: "Get a webhook",
          description: "One webhook, without its secret.",
          tags,
        },
      },
    )
    .put(
      "/:webhook_id",
      async ({ auth, params, body }) => ({
        success: true as const,
        data: await updateWebhook(deps, auth.account, params.webhook_id, body),
      }),
      {
        apiKey: true,
        params: WebhookIdParams,
        transform: urlRules,
        body: "WebhookUpdate",
        response: {
          200: "WebhookResponse",
          403: E("Switching to live needs the Growth or Business plan.", ["PLAN_UPGRADE_REQUIRED"]),
          ...notFound,
          ...errs,
        },
        detail: {
          operationId: "updateWebhook",
          summary: "Update a webhook",
          description:
            'Partial update of `url`, `events`, `mode`, `description`, `headers` (replaced as a whole); absent fields keep their values. `status: "active"` reactivates a deactivated webhook and resets its failure count. Switching to live passes the plan gate.',
          tags,
        },
      },
    )
    .delete(
      "/:webhook_id",
      async ({ auth, params, set }) => {
        await deleteWebhook(deps.db, auth.account.id, params.webhook_id);
        set.status = 204;
        return undefined;
      },
      {
        apiKey: true,
        params: WebhookIdParams,
        response: { 204: Type.Void({ description: "No content." }), ...notFound, ...errs },
        detail: {
          operationId: "deleteWebhook",
          summary: "Delete a webhook",
          description: "Deletes the webhook; its pending deliveries stop. 204, no body.",
          tags,
        },
      },
    );
}
