/** `/v1/shipments` (docs/shipments.md): follow in bulk, list, read, unfollow; only the POST counts quota. */
import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AppDeps } from "../../deps.ts";
import { errorResponses } from "../../lib/errors.ts";
import { authPlugin } from "../../http/auth.ts";
import { jsonBodies } from "../../http/body.ts";
import { idempotent } from "../../http/idempotency.ts";
import { followShipments } from "./follow.ts";
import { ListShipmentsQuery, MAX_SHIPMENTS_PER_CALL, ShipmentParams, shipmentModels } from "./model.ts";
import { listShipments, rotateShipmentLink, storedShipment, unfollowShipment, updateShipment } from "./service.ts";

const E = errorResponses.errorResponse;
const errs = { ...errorResponses.authed, ...errorResponses.common };
const tags = ["Shipments"];
const UPDATE_DESCRIPTION =
  "Changes your own data on a shipment the account follows: `reference` (a string sets it, null clears it) and `metadata` (each key set to a string is set, each key set to null removed; keys not sent stay; at most 20 keys once changed). Fields not sent stay as they are. Answers the follow as it is now. Other accounts following the same shipment keep their own. Free: no quota.";
const notFollowed = { 404: E("The account does not follow this shipment.", ["SHIPMENT_NOT_FOLLOWED"]) };

/** The `/v1/shipments` routes: follow and list, then one followed shipment. */
export function shipmentsModule(deps: AppDeps) {
  return new Elysia().use(shipmentCollection(deps)).use(shipmentById(deps)).use(publicLink(deps));
}

const shipmentRoutes = (deps: AppDeps) =>
  new Elysia({ prefix: "/v1/shipments" }).use(jsonBodies()).use(shipmentModels).use(authPlugin(deps));

/** Follow in bulk, list. */
function shipmentCollection(deps: AppDeps) {
  return shipmentRoutes(deps)
    .post(
      "",
      (c) =>
        idempotent(deps, c, async () => {
          const data = await followShipments(deps, c.auth, c.body);
          c.set.status = 202;
          return { success: true as const, data };
        }),
      {
        apiKey: true,
        body: "ShipmentsFollow",
        response: {
          202: "FollowShipmentsResult",
          402: E("The account needs attention (the whole call is refused).", ["ACCOUNT_NEEDS_ATTENTION"]),
          ...errs,
        },
        detail: {
          operationId: "followShipments",
          summary: "Follow shipments",
          tags,
          description: `Follows up to ${MAX_SHIPMENTS_PER_CALL} shipments without waiting for the couriers: each item answers \`accepted\`, \`invalid\` (with the error code GET /v1/track would give, e.g. INVALID_TRACKING_NUMBER or COURIER_AMBIGUOUS for \`courier=auto\`) or \`quota_exceeded\`. Each newly followed shipment counts as one tracking request, reserved item by item in request order (never beyond the quota); one the account already follows is accepted and not counted again. Accepted shipments are looked up within seconds by the background re-check and then followed as if tracked: their changes reach your live webhooks as events. The lookup-only couriers (indiapost, ekart) cannot be followed (COURIER_NOT_SUPPORTED).`,
        },
      },
    )
    .get(
      "",
      async ({ auth, query }) => ({
        success: true as const,
        data: await listShipments(
          deps.db,
          auth.account.id,
          query,
          { links: deps },
          await deps.services.transitStats.get(),
        ),
      }),
      {
        apiKey: true,
        query: ListShipmentsQuery,
        response: { 200: "ShipmentList", ...errs },
        detail: {
          operationId: "listShipments",
          summary: "List followed shipments",
          tags,
          description:
            "The shipments the account follows, most recently followed first, each with its `reason_code` (the latest failed-attempt reason, normalised) and your `reference` and `metadata`; filtered by `state`, `courier`, `updated_since`, `reference` (exact) and `reason_code`; paginate with `cursor`. Free: no quota.",
        },
      },
    );
}

/** Read, change, unfollow one followed shipment. */
function shipmentById(deps: AppDeps) {
  return shipmentRoutes(deps)
    .get(
      "/:courier/:tracking_number",
      async ({ auth, params }) => ({
        success: true as const,
        ...(await storedShipment(deps, auth.account.id, params.courier, params.tracking_number)),
      }),
      {
        apiKey: true,
        params: ShipmentParams,
        response: { 200: "StoredShipmentResponse", ...notFollowed, ...errs },
        detail: {
          operationId: "getShipment",
          summary: "Get a followed shipment",
          tags,
          description:
            "The stored tracking data of a shipment the account follows, in exactly the GET /v1/track `data` shape, as of its last lookup (`FetchTime` 0.000: no courier is called, no quota is used), and beside it in `follow` your `reference` and `metadata`, and in `actions` your NDR actions on it (docs/ndr-actions.md). Before its first lookup it reads `pending` with no checkpoints.",
        },
      },
    )
    .patch(
      "/:courier/:tracking_number",
      (c) =>
        idempotent(deps, c, async () => ({
          success: true as const,
          data: await updateShipment(deps.db, c.auth.account.id, c.params.courier, c.params.tracking_number, c.body),
        })),
      {
        apiKey: true,
        params: ShipmentParams,
        body: "ShipmentUpdate",
        response: { 200: "UpdateShipmentResult", ...notFollowed, ...errs },
        detail: {
          operationId: "updateShipment",
          summary: "Change a followed shipment's reference and metadata",
          tags,
          description: UPDATE_DESCRIPTION,
        },
      },
    )
    .delete(
      "/:courier/:tracking_number",
      async ({ auth, params, set }) => {
        await unfollowShipment(deps.db, auth.account.id, params.courier, params.tracking_number);
        set.status = 204;
        return undefined;
      },
      {
        apiKey: true,
        params: ShipmentParams,
        response: { 204: Type.Void({ description: "No content." }), ...notFollowed, ...errs },
        detail: {
          operationId: "unfollowShipment",
          summary: "Stop following a shipment",
          tags,
          description:
            "Stops following: events written from now on do not reach this account's webhooks. Following again is a new POST /v1/shipments or GET /v1/track. 204, no body.",
        },
      },
    );
}

/** Rotate the public tracking link of one followed shipment. */
function publicLink(deps: AppDeps) {
  return shipmentRoutes(deps).post(
    "/:courier/:tracking_number/public-link/rotate",
    (c) =>
      idempotent(deps, c, async () => ({
        success: true as const,
        data: await rotateShipmentLink(deps, c.auth.account.id, c.params.courier, c.params.tracking_number),
      })),
    {
      apiKey: true,
      params: ShipmentParams,
      response: { 200: "PublicLinkResult", ...notFollowed, ...errs },
      detail: {
        operationId: "rotatePublicLink",
        summary: "Revoke and reissue a shipment's public tracking link",
        tags,
        description:
          "Revokes the shipment's `public_url` (the old page and its JSON answer 404 from now on, exactly as an unknown link) and answers the new one. Use it when a link was sent to the wrong person. Unfollowing revokes it too. Free: no quota.",
      },
    },
  );
}
