/** The Postman scripts of the collection's requests: id guards and status tests (docs/api-conventions.md#the-postman-collection). */

/** A Postman or OpenAPI JSON object, as the converter hands it over. */
// biome-ignore lint/suspicious/noExplicitAny: the converter's output, read and rewritten by path; typing every read would be a cast per level
export type Json = Record<string, any>;

export interface Operation {
  operationId: string;
  method: string;
  path: string;
  success: number;
  /** The operation needs the API key (its `security` is not empty). */
  keyed: boolean;
}

function script(lines: string[], listen: "test" | "prerequest" = "test"): Json {
  return { listen, script: { type: "text/javascript", exec: lines } };
}

/** Folder-level pre-request script of Webhooks: without `webhook_url` nothing in the folder is sent. */
export const SKIP_WITHOUT_WEBHOOK_URL = script(
  [
    `if (!pm.variables.get("webhook_url")) {`,
    `  console.log("Webhooks folder skipped (" + pm.info.requestName + "): set webhook_url, an https URL of yours that answers 2xx to POST, to run it.");`,
    `  pm.execution.skipRequest();`,
    `}`,
  ],
  "prerequest",
);

/**
 * Pre-request script of Delete a webhook: waits (up to 10 s) until none of its deliveries is pending, so that the
 * run's own redelivery reaches the receiver before the webhook (and so its queued deliveries) is deleted.
 */
export const WAIT_FOR_DELIVERIES = script(
  [
    `var tries = 0;`,
    `(function poll() {`,
    `  if (!pm.variables.get("webhook_id")) return;`,
    `  pm.sendRequest({`,
    `    url: pm.variables.get("baseUrl") + "/v1/webhooks/" + pm.variables.get("webhook_id") + "/deliveries",`,
    `    header: { "X-API-Key": pm.variables.get("api_key") },`,
    `  }, function (err, res) {`,
    `    var pending = !err && res.code === 200 && res.json().data.deliveries.some(function (d) { return d.state === "pending"; });`,
    `    if (pending && ++tries < 20) setTimeout(poll, 500);`,
    `  });`,
    `})();`,
  ],
  "prerequest",
);

/** Where each id variable comes from, for the message when it is unset. */
const ID_SOURCES: Record<string, string> = {
  webhook_id: "Create a webhook must run first and succeed",
  delivery_id: "List a webhook's deliveries must run first and find one",
  own_followed: "Follow shipments must run first and follow the collection's own shipment",
};

/** The operations that act on the collection's own shipment (and need `own_followed`). */
export const OWN_SHIPMENT_OPS = new Set([
  "getShipment",
  "updateShipment",
  "advanceSandboxShipment",
  "rotatePublicLink",
  "createShipmentAction",
  "listShipmentActions",
  "unfollowShipment",
]);

/** Pre-request script of a request needing `{{webhook_id}}`/`{{delivery_id}}`: unset, it fails a test and is not sent. */
export function requireIds(op: Operation): Json | undefined {
  const needed = Object.keys(ID_SOURCES).filter(
    (v) => op.path.includes(`{${v}}`) || (v === "own_followed" && OWN_SHIPMENT_OPS.has(op.operationId)),
  );
  if (needed.length === 0) return undefined;
  return script(
    needed.flatMap((v) => [
      `if (!pm.variables.get("${v}")) {`,
      `  pm.test("${op.operationId}: ${v} is set (${ID_SOURCES[v]})", function () {`,
      `    pm.expect.fail("${v} is not set: request not sent");`,
      `  });`,
      `  pm.execution.skipRequest();`,
      `}`,
    ]),
    "prerequest",
  );
}

export function testsFor(op: Operation): Json[] {
  const lines = [
    `pm.test("${op.operationId}: status ${op.success}", function () {`,
    `  pm.response.to.have.status(${op.success});`,
    `});`,
  ];
  if (op.operationId === "createWebhook")
    lines.push(
      `pm.test("createWebhook: webhook id captured", function () {`,
      `  var id = pm.response.json().data.id;`,
      `  pm.expect(id).to.match(/^wh_/);`,
      `  pm.collectionVariables.set("webhook_id", id);`,
      `});`,
    );
  if (op.operationId === "followShipments")
    lines.push(
      `pm.test("followShipments: the collection's own shipment is newly followed", function () {`,
      `  var item = pm.response.json().data.shipments[0];`,
      `  pm.expect(item.result).to.eql("accepted");`,
      `  pm.expect(item.already_followed).to.not.eql(true);`,
      `  pm.collectionVariables.set("own_followed", "true");`,
      `});`,
    );
  if (op.operationId === "unfollowShipment")
    lines.push(`if (pm.response.code === ${op.success}) pm.collectionVariables.unset("own_followed");`);
  if (op.operationId === "deleteWebhook")
    lines.push(`if (pm.response.code === ${op.success}) pm.collectionVariables.unset("webhook_id");`);
  if (op.operationId === "testWebhook")
    lines.push(
      `pm.test("testWebhook: delivered to {{webhook_url}}", function () {`,
      `  pm.expect(pm.response.json().data.delivered).to.eql(true);`,
      `});`,
    );
  if (op.operationId === "listWebhookDeliveries")
    lines.push(
      `pm.test("listWebhookDeliveries: delivery id captured", function () {`,
      `  var id = pm.response.json().data.deliveries[0].id;`,
      `  pm.expect(id).to.match(/^dlv_/);`,
      `  pm.collectionVariables.set("delivery_id", id);`,
      `});`,
    );
  const events = [script(lines)];
  // Recover looks back at most 30 days: the body's `since` is computed when the request runs.
  if (op.operationId === "recoverWebhookDeliveries")
    events.push({
      listen: "prerequest",
      script: {
        type: "text/javascript",
        exec: [`pm.collectionVariables.set("recover_since", new Date(Date.now() - 86400000).toISOString());`],
      },
    });
  return events;
}
