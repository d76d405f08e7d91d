/** `GET /v1/events` and the webhook `redeliver` and `recover` routes (docs/events.md). */
import { Elysia } from "elysia";
import type { AppDeps } from "../../deps.ts";
import { errorResponses, RequestValidationError } from "../../lib/errors.ts";
import { authPlugin } from "../../http/auth.ts";
import { jsonBodies } from "../../http/body.ts";
import { idempotent } from "../../http/idempotency.ts";
import { WebhookIdParams } from "../webhooks/model.ts";
import { recover, RECOVER_WINDOW_MS, redeliver } from "../webhooks/replay.ts";
import { eventModels, EventsQuery, RedeliverParams } from "./model.ts";
import { listEvents } from "./service.ts";
import { dateTimeMs } from "../../http/text.ts";

const E = errorResponses.errorResponse;
const errs = { ...errorResponses.authed, ...errorResponses.common };

/** `GET /v1/events`, then the webhook redeliver and recover routes. */
export function eventsModule(deps: AppDeps) {
  return new Elysia().use(eventList(deps)).use(eventReplay(deps));
}

const eventRoutes = (deps: AppDeps) =>
  new Elysia({ prefix: "/v1" }).use(jsonBodies()).use(eventModels).use(authPlugin(deps));

function eventList(deps: AppDeps) {
  return eventRoutes(deps).get(
    "/events",
    async ({ auth, query }) => ({
      success: true as const,
      data: await listEvents(deps, auth.account.id, deps.clock.now(), query),
    }),
    {
      apiKey: true,
      query: EventsQuery,
      response: { 200: "EventList", ...errs },
      detail: {
        operationId: "listEvents",
        summary: "List events",
        tags: ["Events"],
        description:
          "The account's events of the last 30 days, newest first: every change of a shipment it follows, and every event delivered to its webhooks. Each has its stable id (the `X-Webhook-Event-Id` and `webhook-id` of its deliveries), its time and the payload a delivery carries. Filter by `type`, `courier`, `tracking_number`, `since`; paginate with `cursor`. Free: no quota.",
      },
    },
  );
}

/** Redeliver one delivery, recover a webhook's failed deliveries. */
function eventReplay(deps: AppDeps) {
  return eventRoutes(deps)
    .post(
      "/webhooks/:webhook_id/deliveries/:delivery_id/redeliver",
      (c) =>
        idempotent(deps, c, async () => {
          const data = await redeliver(deps, c.auth.account.id, c.params.webhook_id, c.params.delivery_id);
          c.set.status = 202;
          return { success: true as const, data: { delivery_id: data.id, enqueued_at: data.enqueued_at } };
        }),
      {
        apiKey: true,
        params: RedeliverParams,
        response: {
          202: "Redelivery",
          404: E("No such webhook on this account, or no such delivery on this webhook.", [
            "WEBHOOK_NOT_FOUND",
            "DELIVERY_NOT_FOUND",
          ]),
          ...errs,
        },
        detail: {
          operationId: "redeliverWebhookDelivery",
          summary: "Redeliver an event",
          tags: ["Webhooks"],
          description:
            "Queues a new delivery of the delivery's event to the same webhook, now, with a fresh attempt sequence (`X-Webhook-Delivery: <webhook_id>-1`) and the usual retries. The body is rebuilt from the freshest shipment record and signed with the current secret, as every retry is; the event id and `enqueued_at` stay the event's own. A webhook deactivated or no longer subscribed to the event records the new delivery as skipped.",
        },
      },
    )
    .post(
      "/webhooks/:webhook_id/recover",
      (c) =>
        idempotent(deps, c, async () => {
          const since = dateTimeMs(c.body.since);
          const now = deps.clock.now();
          if (since === undefined || !(since >= now - RECOVER_WINDOW_MS && since <= now))
            throw new RequestValidationError([
              { loc: ["body", "since"], msg: "must lie within the last 30 days", type: "value_error" },
            ]);
          const queued = await recover(deps, c.auth.account.id, c.params.webhook_id, since);
          c.set.status = 202;
          return { success: true as const, data: { queued } };
        }),
      {
        apiKey: true,
        params: WebhookIdParams,
        body: "DeliveriesRecover",
        response: {
          202: "RecoverResult",
          404: E("No webhook with this id on this account.", ["WEBHOOK_NOT_FOUND"]),
          ...errs,
        },
        detail: {
          operationId: "recoverWebhookDeliveries",
          summary: "Recover failed deliveries",
          tags: ["Webhooks"],
          description:
            "Queues again every delivery to this webhook that ended abandoned (six failed attempts) or dropped (address check) at or after `since` (at most 30 days ago), the newest delivery of each event once; test fires and audits are never recovered. Each is a new delivery with a fresh attempt sequence, built from the freshest record. Answers how many were queued.",
        },
      },
    );
}
