/**
 * OpenAPI `links` (3.1, "Link Object"): which operation a generic client can call next with values from an answer,
 * for the chains of webhooks (create → read → update → delete), shipments (follow → read → update → unfollow) and
 * deliveries (test fire → delivery log → redeliver). Runtime expressions read the body or the request's path.
 */
import type { Json } from "./json.ts";

interface Link {
  operationId: string;
  parameters: Record<string, string>;
  description: string;
}

const WEBHOOK_OPS: Record<string, string> = {
  getWebhook: "Read this webhook.",
  updateWebhook: "Change this webhook.",
  deleteWebhook: "Delete this webhook.",
  testWebhook: "Send this webhook a test fire.",
  listWebhookDeliveries: "This webhook's delivery log.",
};
const SHIPMENT_OPS: Record<string, string> = {
  getShipment: "Read this shipment's stored record.",
  updateShipment: "Change this follow's reference or metadata.",
  unfollowShipment: "Stop following this shipment.",
};

/** Links to each of `ops` but `except`, every one filling `parameters`. */
function linksTo(
  ops: Record<string, string>,
  parameters: Record<string, string>,
  except?: string,
): Record<string, Link> {
  return Object.fromEntries(
    Object.entries(ops)
      .filter(([id]) => id !== except)
      .map(([operationId, description]) => [operationId, { operationId, parameters, description }]),
  );
}

const webhookAt = (expr: string) => ({ webhook_id: expr });
const shipmentAt = (base: string) => ({
  courier: `${base}/courier`,
  tracking_number: `${base}/tracking_number`,
});
const SHIPMENT_IN_PATH = { courier: "$request.path.courier", tracking_number: "$request.path.tracking_number" };
const DELIVERY_LOG: Record<string, Link> = {
  listWebhookDeliveries: {
    operationId: "listWebhookDeliveries",
    parameters: webhookAt("$request.path.webhook_id"),
    description: "The webhook's delivery log, where this delivery shows.",
  },
};

/** Per operationId and success status: the links of that answer. */
const LINKS: Record<string, Record<string, Record<string, Link>>> = {
  createWebhook: {
    "201": {
      ...linksTo(WEBHOOK_OPS, webhookAt("$response.body#/data/id")),
      recoverWebhookDeliveries: {
        operationId: "recoverWebhookDeliveries",
        parameters: webhookAt("$response.body#/data/id"),
        description: "Queue this webhook's failed deliveries again.",
      },
    },
  },
  listWebhooks: { "200": linksTo(WEBHOOK_OPS, webhookAt("$response.body#/data/webhooks/0/id")) },
  getWebhook: { "200": linksTo(WEBHOOK_OPS, webhookAt("$response.body#/data/id"), "getWebhook") },
  updateWebhook: { "200": linksTo(WEBHOOK_OPS, webhookAt("$response.body#/data/id"), "updateWebhook") },
  testWebhook: { "200": DELIVERY_LOG },
  listWebhookDeliveries: {
    "200": {
      redeliverWebhookDelivery: {
        operationId: "redeliverWebhookDelivery",
        parameters: { webhook_id: "$request.path.webhook_id", delivery_id: "$response.body#/data/deliveries/0/id" },
        description: "Deliver the first listed delivery's event again.",
      },
    },
  },
  redeliverWebhookDelivery: { "202": DELIVERY_LOG },
  recoverWebhookDeliveries: { "202": DELIVERY_LOG },
  followShipments: { "202": linksTo(SHIPMENT_OPS, shipmentAt("$response.body#/data/shipments/0")) },
  listShipments: { "200": linksTo(SHIPMENT_OPS, shipmentAt("$response.body#/data/shipments/0")) },
  getShipment: { "200": linksTo(SHIPMENT_OPS, SHIPMENT_IN_PATH, "getShipment") },
  updateShipment: { "200": linksTo(SHIPMENT_OPS, shipmentAt("$response.body#/data"), "updateShipment") },
};

/**
 * Puts {@link LINKS} on the finished operations of `paths`, in place.
 * @throws Error when a link's response or target operation is not in the document
 */
export function addLinks(paths: Json): void {
  const ops = Object.values(paths).flatMap((p) => Object.values(p as Json)) as Json[];
  const ids = new Set(ops.map((op) => op.operationId));
  for (const op of ops)
    for (const [status, links] of Object.entries(LINKS[op.operationId] ?? {})) {
      const r = op.responses?.[status];
      if (!r) throw new Error(`${op.operationId} has no ${status} response for its links`);
      for (const l of Object.values(links))
        if (!ids.has(l.operationId)) throw new Error(`${op.operationId} links to unknown ${l.operationId}`);
      r.links = links;
    }
}
