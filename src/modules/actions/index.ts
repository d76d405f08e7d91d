/** `/v1/shipments/{courier}/{tracking_number}/actions` (docs/ndr-actions.md): ask the courier to act on a failed delivery. */
import { Elysia } from "elysia";
import type { AppDeps } from "../../deps.ts";
import { errorResponses } from "../../lib/errors.ts";
import { authPlugin } from "../../http/auth.ts";
import { jsonBodies } from "../../http/body.ts";
import { idempotent } from "../../http/idempotency.ts";
import { ActionParams as ShipmentParams, actionModels } from "./model.ts";
import { listActions, requestAction } from "./service.ts";

const E = errorResponses.errorResponse;
const errs = { ...errorResponses.authed, ...errorResponses.common };
const tags = ["Shipments"];
const notFollowed = { 404: E("The account does not follow this shipment.", ["SHIPMENT_NOT_FOLLOWED"]) };

const CREATE_DESCRIPTION = `Asks the courier to act on a shipment the account follows after a failed delivery attempt: \`reattempt\`, \`defer_delivery\` (to \`deferred_date\`), \`update_consignee\` (\`consignee\` fields) or \`return_to_origin\`. Eligibility is checked before any courier call: the courier must document the action (GET /v1/couriers lists each courier's \`actions\`; otherwise 422 \`action_not_supported\`), the plan must include actions (Pro, Growth, Business; else 403 PLAN_UPGRADE_REQUIRED), the shipment's state and the courier's newest status code must be ones the courier accepts it for (409 ACTION_NOT_ELIGIBLE, \`rule\`: \`state\` or \`status_code\`), a deferred date must be within the courier's window (422 \`action_date_out_of_range\`), and one action at a time per shipment (409 ACTION_IN_PROGRESS). Answers 202 with the action \`requested\`; it is then sent through the courier's budget, retried with back-off, and, for an asynchronous courier (Delhivery), its decision polled. Each final status (\`accepted\`, \`rejected\`, \`failed\`) sends \`tracking.action_updated\` to this account's webhooks that list it. Consignee details are stored encrypted and only ever shown masked. Free: no quota.`;

/** The actions routes on a followed shipment. */
export function actionsModule(deps: AppDeps) {
  return new Elysia({ prefix: "/v1/shipments" })
    .use(jsonBodies())
    .use(actionModels)
    .use(authPlugin(deps))
    .post(
      "/:courier/:tracking_number/actions",
      (c) =>
        idempotent(deps, c, async () => {
          const data = await requestAction(deps, c.auth, c.params.courier, c.params.tracking_number, c.body);
          c.set.status = 202;
          return { success: true as const, data };
        }),
      {
        apiKey: true,
        params: ShipmentParams,
        body: "ShipmentActionCreate",
        response: {
          202: "ShipmentActionResponse",
          403: E("The account's plan does not include NDR actions.", ["PLAN_UPGRADE_REQUIRED"]),
          409: E("The shipment is not eligible for this action now, or another action awaits the courier.", [
            "ACTION_NOT_ELIGIBLE",
            "ACTION_IN_PROGRESS",
          ]),
          ...notFollowed,
          ...errs,
        },
        detail: {
          operationId: "createShipmentAction",
          summary: "Ask the courier to act on a failed delivery",
          tags,
          description: CREATE_DESCRIPTION,
        },
      },
    )
    .get(
      "/:courier/:tracking_number/actions",
      async ({ auth, params }) => {
        const actions = await listActions(deps, auth.account.id, params.courier, params.tracking_number);
        return { success: true as const, data: { actions, count: actions.length } };
      },
      {
        apiKey: true,
        params: ShipmentParams,
        response: { 200: "ShipmentActionList", ...notFollowed, ...errs },
        detail: {
          operationId: "listShipmentActions",
          summary: "List the account's actions on a followed shipment",
          tags,
          description:
            "The NDR actions this account asked for on the shipment, newest first (at most 50), each with its status, the courier's reference and reason, consignee details masked. Free: no quota.",
        },
      },
    );
}
