/** The `/v1/webhooks/{id}/test`, `/audit` and `/deliveries` routes (spec: Endpoints; docs/webhooks.md). */
import { Elysia } from "elysia";
import type { AppDeps } from "../../deps.ts";
import { errorResponses } from "../../lib/errors.ts";
import { authPlugin } from "../../http/auth.ts";
import { jsonBodies } from "../../http/body.ts";
import { idempotent } from "../../http/idempotency.ts";
import { systemResolver, type Resolver } from "./delivery/address-guard.ts";
import { senderFromConfig } from "./delivery/attempt.ts";
import type { WebhookSender } from "./delivery/http.ts";
import { DeliveriesQuery, WebhookIdParams, webhookModels } from "./model.ts";
import { listDeliveries } from "./service.ts";
import { testFire } from "./test-fire.ts";
import { auditReceiver, AUDITS_PER_HOUR } from "./audit.ts";
import { E, errs, notFound, tags } from "./route-responses.ts";

/** A test fire to one webhook, and its delivery log. */
export function webhookDeliveries(deps: AppDeps & { resolver?: Resolver }) {
  const sender = senderFromConfig(deps, deps.resolver ?? systemResolver);
  return new Elysia().use(webhookTests(deps, sender)).use(deliveryLog(deps));
}

/** A test fire and a receiver audit. */
function webhookTests(deps: AppDeps, sender: WebhookSender) {
  return new Elysia({ prefix: "/v1/webhooks", tags })
    .use(jsonBodies())
    .use(webhookModels)
    .use(authPlugin(deps))
    .post(
      "/:webhook_id/test",
      (c) =>
        idempotent(deps, c, async () => ({
          success: true as const,
          data: await testFire(deps, sender, c.auth.account.id, c.params.webhook_id, c.body?.event),
        })),
      {
        apiKey: true,
        params: WebhookIdParams,
        body: "WebhookTestFire",
        response: {
          200: "TestFireResult",
          409: E("The webhook is live; test fires go to test webhooks only.", ["WEBHOOK_IS_LIVE"]),
          503: E("Test fires are switched off (kill-switch), or the service is unavailable.", [
            "TEST_WEBHOOKS_DISABLED",
            "SERVICE_UNAVAILABLE",
          ]),
          ...notFound,
          ...errorResponses.authed,
          422: errorResponses.common[422],
          500: errorResponses.common[500],
        },
        detail: {
          operationId: "testWebhook",
          summary: "Send a test delivery",
          description:
            'Sends one sample delivery, synchronously, to a TEST webhook: signed like real deliveries, `X-Webhook-Mode: test`, `data.courier` beginning with `synthetic-test-`. Optional body `{ "event": … }` (default: the webhook\'s first event). Not retried; free on every plan.',
          tags,
        },
      },
    )
    .post(
      "/:webhook_id/audit",
      (c) =>
        idempotent(deps, c, async () => ({
          success: true as const,
          data: await auditReceiver(deps, sender, c.auth.account.id, c.params.webhook_id),
        })),
      {
        apiKey: true,
        params: WebhookIdParams,
        response: {
          200: "ReceiverAuditReport",
          429: E(`Per-minute rate limit, or more than ${AUDITS_PER_HOUR} audits this hour; see Retry-After.`, [
            "RATE_LIMITED",
          ]),
          503: E("Test deliveries are switched off (kill-switch), or the service is unavailable.", [
            "TEST_WEBHOOKS_DISABLED",
            "SERVICE_UNAVAILABLE",
          ]),
          ...notFound,
          401: errorResponses.authed[401],
          422: errorResponses.common[422],
          500: errorResponses.common[500],
        },
        detail: {
          operationId: "auditWebhookReceiver",
          summary: "Audit the webhook's receiver",
          description: `Sends to the webhook's URL, one after another, four test deliveries (\`X-Webhook-Mode: test\`, \`X-Webhook-Audit: true\`): \`valid\` (correctly signed), \`wrong_signature\` (signed with another secret), \`stale_timestamp\` (\`webhook-timestamp\` 10 minutes old, correctly signed for it) and \`no_signature\` (no \`X-Service-Signature\` nor \`webhook-signature\`). The report gives the status each got; \`verdict\` is \`ok\` when the valid one got a 2xx and the three others a 4xx. Each case is in the delivery log as a test delivery. At most ${AUDITS_PER_HOUR} audits an hour per account; live and test webhooks alike.`,
          tags,
        },
      },
    );
}

/** One webhook's delivery log. */
function deliveryLog(deps: AppDeps) {
  return new Elysia({ prefix: "/v1/webhooks", tags })
    .use(jsonBodies())
    .use(webhookModels)
    .use(authPlugin(deps))
    .get(
      "/:webhook_id/deliveries",
      async ({ auth, params, query }) => ({
        success: true as const,
        data: await listDeliveries(deps.db, auth.account.id, params.webhook_id, { ...query, limit: query.limit ?? 20 }),
      }),
      {
        apiKey: true,
        params: WebhookIdParams,
        query: DeliveriesQuery,
        response: { 200: "DeliveryList", ...notFound, ...errs },
        detail: {
          operationId: "listWebhookDeliveries",
          summary: "List a webhook's deliveries",
          description:
            "Recent deliveries, newest first, each with its event (`event_id`, `event_type`, `sequence`) and attempt log (one entry per hop, with status or error class, duration and the first 2 KB of the response). Paginate with `cursor`. Filter by `status`, `event_type`, `since`/`until` (the event's `enqueued_at`). `after_sequence=N` lists what followed sequence N, lowest first: the next page is `after_sequence` = the last item's `sequence`.",
          tags,
        },
      },
    );
}
