/** The Postman v2.1 collection (spec: Other): docs/api-conventions.md#the-postman-collection. */
import type { convertV2 as ConvertV2 } from "openapi-to-postmanv2";
import { DRAW_OWN_AWB, OWN_COURIER, SHIPMENT_NOTES } from "./own-shipment.ts";
import {
  OWN_SHIPMENT_OPS,
  requireIds,
  SKIP_WITHOUT_WEBHOOK_URL,
  testsFor,
  type Json,
  type Operation,
  WAIT_FOR_DELIVERIES,
} from "./scripts.ts";

/** Order of the webhook requests: create first (it captures the id), delete last. */
const WEBHOOK_ORDER = [
  "createWebhook",
  "listWebhooks",
  "getWebhook",
  "updateWebhook",
  "testWebhook",
  "listWebhookDeliveries",
  "redeliverWebhookDelivery",
  "recoverWebhookDeliveries",
  "auditWebhookReceiver",
  "rotateWebhookSecret",
  "deleteWebhook",
];
/** Order of the shipment requests: follow first (the others read and unfollow what it followed, and only that). */
const SHIPMENT_ORDER = [
  "followShipments",
  "listShipments",
  "getShipment",
  "updateShipment",
  "advanceSandboxShipment",
  "rotatePublicLink",
  "createShipmentAction",
  "listShipmentActions",
  "unfollowShipment",
];
const ORDER: Record<string, string[]> = { Webhooks: WEBHOOK_ORDER, Shipments: SHIPMENT_ORDER };

/** Runs the converter (loaded on the first call) as a promise. @throws when it reports a failure */
export async function convertOpenApi(doc: Json): Promise<Json> {
  const { convertV2 } = (await import("openapi-to-postmanv2")) as { convertV2: typeof ConvertV2 };
  return new Promise((resolve, reject) => {
    convertV2(
      { type: "json", data: structuredClone(doc) },
      // Examples (not faked values) for parameters and bodies; optional query parameters start disabled.
      {
        folderStrategy: "Tags",
        parametersResolution: "Example",
        enableOptionalParameters: false,
        includeWebhooks: false,
        requestNameSource: "Fallback",
      },
      (err, res) => {
        if (err) return reject(err);
        if (!res?.result || !res.output?.[0])
          return reject(new Error(`openapi-to-postmanv2: ${res?.reason ?? "no output"}`));
        resolve(res.output[0].data as Json);
      },
    );
  });
}

function operationsOf(doc: Json): Map<string, Operation> {
  const ops = new Map<string, Operation>();
  for (const [path, methods] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(methods as Json)) {
      const success = Number(Object.keys(op.responses ?? {}).find((s) => /^2\d\d$/.test(s)) ?? 200);
      const keyed = Array.isArray(op.security)
        ? op.security.length > 0
        : Array.isArray(doc.security) && doc.security.length > 0;
      ops.set(`${method.toUpperCase()} ${path}`, { operationId: op.operationId, method, path, success, keyed });
    }
  }
  return ops;
}

/** `["v1","webhooks",":webhook_id"]` → `/v1/webhooks/{webhook_id}` (the document's spelling). */
function docPath(url: Json): string {
  const segs: string[] = Array.isArray(url.path) ? url.path : String(url.path ?? "").split("/");
  return `/${segs
    .filter((s) => s !== "")
    .map((s) => (s.startsWith(":") ? `{${s.slice(1)}}` : s))
    .join("/")}`;
}

/** The collection's auth: the `X-API-Key` header from `{{api_key}}`, inherited by every request that does not opt out. */
const API_KEY_AUTH: Json = {
  type: "apikey",
  apikey: [
    { key: "key", value: "X-API-Key", type: "string" },
    { key: "value", value: "{{api_key}}", type: "string" },
    { key: "in", value: "header", type: "string" },
  ],
};

function finishRequest(item: Json, op: Operation): void {
  const req = item.request as Json;
  // Keyed requests inherit the collection's auth; the public ones send no key.
  if (op.keyed) delete req.auth;
  else req.auth = { type: "noauth" };
  req.header = (req.header ?? []).filter((h: Json) => h.key.toLowerCase() !== "x-api-key");
  for (const v of req.url?.variable ?? []) {
    if (v.key === "webhook_id" && op.path.startsWith("/v1/webhooks/")) v.value = "{{webhook_id}}";
    if (v.key === "delivery_id") v.value = "{{delivery_id}}";
    if (OWN_SHIPMENT_OPS.has(op.operationId) && v.key === "courier") v.value = OWN_COURIER;
    if (OWN_SHIPMENT_OPS.has(op.operationId) && v.key === "tracking_number") v.value = "{{own_tracking_number}}";
  }
  if (op.operationId === "followShipments" && req.body?.mode === "raw")
    req.body.raw = JSON.stringify(
      { shipments: [{ courier: OWN_COURIER, tracking_number: "{{own_tracking_number}}" }] },
      null,
      2,
    );
  const note = SHIPMENT_NOTES[op.operationId];
  if (note) req.description = appendText(req.description, note);
  if (op.operationId === "createShipmentAction" && req.body?.mode === "raw")
    req.body.raw = JSON.stringify({ action: "return_to_origin" }, null, 2);
  if (op.operationId === "recoverWebhookDeliveries" && req.body?.mode === "raw")
    req.body.raw = JSON.stringify({ since: "{{recover_since}}" }, null, 2);
  if ((op.operationId === "createWebhook" || op.operationId === "updateWebhook") && req.body?.mode === "raw") {
    const body = JSON.parse(req.body.raw) as Json;
    body.url = "{{webhook_url}}";
    req.body.raw = JSON.stringify(body, null, 2);
  }
  const guard = requireIds(op);
  item.event = [
    ...(op.operationId === "followShipments" ? [DRAW_OWN_AWB] : []),
    ...(guard ? [guard] : []),
    ...(op.operationId === "deleteWebhook" ? [WAIT_FOR_DELIVERIES] : []),
    ...testsFor(op),
  ];
}

/** A converter description (a string or `{ content, type }`) with `text` appended as a new paragraph. */
function appendText(description: unknown, text: string): Json | string {
  if (description && typeof description === "object") {
    const d = description as Json;
    return { ...d, content: d.content ? `${d.content}\n\n${text}` : text };
  }
  return typeof description === "string" && description ? `${description}\n\n${text}` : text;
}

/**
 * Finishes a converted collection of `doc`; `baseUrl` and `echoUrl` (sandbox) become the variables' defaults.
 * @throws when a request cannot be matched to an operation of `doc`
 */
export function finishCollection(collection: Json, doc: Json, baseUrl: string, echoUrl?: string): Json {
  const ops = operationsOf(doc);
  const folders: Json[] = [];
  for (const folder of collection.item as Json[]) {
    const items = (folder.item ?? [folder]) as Json[];
    if (items.length === 0) continue;
    for (const item of items) {
      const op = ops.get(`${item.request.method} ${docPath(item.request.url)}`);
      if (!op) throw new Error(`postman: no operation for ${item.request.method} ${docPath(item.request.url)}`);
      finishRequest(item, op);
      item._operationId = op.operationId;
    }
    const order = ORDER[folder.name];
    if (order) items.sort((a, b) => order.indexOf(a._operationId) - order.indexOf(b._operationId));
    const webhooks = folder.name === "Webhooks";
    for (const item of items) delete item._operationId;
    folders.push(
      folder.item ? { ...folder, item: items, ...(webhooks ? { event: [SKIP_WITHOUT_WEBHOOK_URL] } : {}) } : folder,
    );
  }
  const description = collectionDescription(collection, echoUrl);
  const finished: Json = {
    ...collection,
    info: {
      ...collection.info,
      name: "Courier Tracking API",
      description,
      schema: "https://schema.getpostman.com/json/collection/v2.1.0/collection.json",
    },
    item: folders,
    auth: API_KEY_AUTH,
    variable: collectionVariables(baseUrl, echoUrl),
  };
  // Saved examples keep the converter's own auth variable name; one spelling everywhere.
  return JSON.parse(JSON.stringify(finished).replaceAll("{{apiKey}}", "{{api_key}}")) as Json;
}

/** The collection's description: the converter's, then what to set and what a run changes on the account. */
function collectionDescription(collection: Json, echoUrl: string | undefined): string {
  return [
    typeof collection.info?.description === "object"
      ? collection.info.description.content
      : (collection.info?.description ?? ""),
    "",
    echoUrl
      ? "Set `api_key` in your environment. `webhook_url` defaults to this sandbox's own echo receiver (" +
        echoUrl +
        "), which answers 2xx; set it to an https URL of yours to receive the deliveries yourself."
      : "Set `api_key` (and `webhook_url`, an https URL that answers 2xx, for the webhook requests) in your environment.",
    "The API key is set once, as the collection's auth (API Key, header `X-API-Key`).",
    "What a run changes on your account: the Shipments folder follows one shipment of its own (a fresh delhivery AWB ending in 7) and unfollows it again, and never touches your own shipments; " +
      "the Track requests count against your quota like any lookup.",
    "The Webhooks folder creates a test webhook, exercises it and deletes it again; its rotate-secret request replaces your account's signing secret.",
    "Without `webhook_url` the Webhooks folder is skipped (a console message says so): nothing is created and the secret is not rotated.",
  ].join("\n");
}

/** The collection's variables; `baseUrl` and `echoUrl` (sandbox) are defaults. */
function collectionVariables(baseUrl: string, echoUrl: string | undefined): Json[] {
  return [
    { key: "baseUrl", value: baseUrl, type: "string" },
    { key: "api_key", value: "", type: "string", description: "Your API key (`ctk_…`)." },
    {
      key: "webhook_url",
      value: echoUrl ?? "",
      type: "string",
      description: echoUrl
        ? "An https URL that answers 2xx to POST; defaults to the sandbox echo receiver."
        : "An https URL of yours that answers 2xx to POST.",
    },
    { key: "webhook_id", value: "", type: "string", description: "Set by the Create a webhook request's test script." },
    {
      key: "delivery_id",
      value: "",
      type: "string",
      description: "Set by the List a webhook's deliveries request's test script.",
    },
    {
      key: "recover_since",
      value: "",
      type: "string",
      description: "Set by the Recover request's pre-request script (one day ago).",
    },
    {
      key: "own_tracking_number",
      value: "",
      type: "string",
      description: "The collection's own shipment (delhivery), drawn by the Follow shipments request.",
    },
    {
      key: "own_followed",
      value: "",
      type: "string",
      description: "Set by Follow shipments when it followed the collection's own shipment; Stop following needs it.",
    },
  ];
}
