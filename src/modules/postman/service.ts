/**
 * The Postman v2.1 collection (spec: "A Postman collection is served at
 * {base_url}/postman"; CONTRACT 8): converted from the live OpenAPI document
 * by `openapi-to-postmanv2`, then finished so that it runs top to bottom
 * against a real service with only `api_key` and `webhook_url` supplied:
 *
 * - variables `baseUrl` (PUBLIC_BASE_URL), `api_key`, `webhook_url`, and
 *   `webhook_id` (filled by the create request's test script);
 * - every `/v1` request sends `X-API-Key: {{api_key}}` as a plain header;
 * - webhook create/update bodies point at `{{webhook_url}}`, the webhook
 *   requests run create → list → get → update → test → deliveries →
 *   rotate-secret → delete, and use `{{webhook_id}}`;
 * - every request has a test asserting the operation's documented success
 *   status (newman reports it), folders follow the document's tags.
 */
import { convertV2 } from "openapi-to-postmanv2";

type Json = Record<string, any>;

/** Order of the webhook requests: create first (it captures the id), delete last. */
const WEBHOOK_ORDER = ["createWebhook", "listWebhooks", "getWebhook", "updateWebhook", "testWebhook", "listWebhookDeliveries", "rotateWebhookSecret", "deleteWebhook"];

/** Runs the converter (callback API) as a promise. Throws when it reports a failure. */
export function convertOpenApi(doc: Json): Promise<Json> {
  return new Promise((resolve, reject) => {
    convertV2(
      { type: "json", data: structuredClone(doc) },
      // Examples (not faked values) for parameters and bodies; optional query parameters start disabled.
      { folderStrategy: "Tags", parametersResolution: "Example", enableOptionalParameters: false, includeWebhooks: false, requestNameSource: "Fallback" },
      (err, res) => {
        if (err) return reject(err);
        if (!res?.result || !res.output?.[0]) return reject(new Error(`openapi-to-postmanv2: ${res?.reason ?? "no output"}`));
        resolve(res.output[0].data as Json);
      },
    );
  });
}

interface Operation {
  operationId: string;
  method: string;
  path: string;
  success: number;
}

function operationsOf(doc: Json): Map<string, Operation> {
  const ops = new Map<string, Operation>();
  for (const [path, methods] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(methods as Json)) {
      const success = Number(Object.keys(op.responses ?? {}).find((s) => /^2\d\d$/.test(s)) ?? 200);
      ops.set(`${method.toUpperCase()} ${path}`, { operationId: op.operationId, method, path, success });
    }
  }
  return ops;
}

/** `["v1","webhooks",":webhook_id"]` → `/v1/webhooks/{webhook_id}` (the document's spelling). */
function docPath(url: Json): string {
  const segs: string[] = Array.isArray(url.path) ? url.path : String(url.path ?? "").split("/");
  return `/${segs.filter((s) => s !== "").map((s) => (s.startsWith(":") ? `{${s.slice(1)}}` : s)).join("/")}`;
}

function script(lines: string[]): Json {
  return { listen: "test", script: { type: "text/javascript", exec: lines } };
}

function testsFor(op: Operation): Json[] {
  const lines = [`pm.test("${op.operationId}: status ${op.success}", function () {`, `  pm.response.to.have.status(${op.success});`, `});`];
  if (op.operationId === "createWebhook")
    lines.push(
      `pm.test("createWebhook: webhook id captured", function () {`,
      `  var id = pm.response.json().data.id;`,
      `  pm.expect(id).to.match(/^wh_/);`,
      `  pm.collectionVariables.set("webhook_id", id);`,
      `});`,
    );
  if (op.operationId === "testWebhook")
    lines.push(`pm.test("testWebhook: delivered to {{webhook_url}}", function () {`, `  pm.expect(pm.response.json().data.delivered).to.eql(true);`, `});`);
  return [script(lines)];
}

function finishRequest(item: Json, op: Operation): void {
  const req = item.request as Json;
  delete req.auth;
  const headers: Json[] = (req.header ?? []).filter((h: Json) => h.key.toLowerCase() !== "x-api-key");
  if (op.path.startsWith("/v1/")) headers.unshift({ key: "X-API-Key", value: "{{api_key}}", description: "Your API key (environment value `api_key`)." });
  req.header = headers;
  for (const v of req.url?.variable ?? []) if (v.key === "webhook_id" && op.path.startsWith("/v1/webhooks/")) v.value = "{{webhook_id}}";
  if ((op.operationId === "createWebhook" || op.operationId === "updateWebhook") && req.body?.mode === "raw") {
    const body = JSON.parse(req.body.raw) as Json;
    body.url = "{{webhook_url}}";
    req.body.raw = JSON.stringify(body, null, 2);
  }
  item.event = testsFor(op);
}

/**
 * Finishes a converted collection (see the module comment). `doc` is the
 * OpenAPI document it came from; `baseUrl` becomes the `baseUrl` default.
 * Throws when a request cannot be matched to an operation of `doc`.
 */
export function finishCollection(collection: Json, doc: Json, baseUrl: string): Json {
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
    if (folder.name === "Webhooks") items.sort((a, b) => WEBHOOK_ORDER.indexOf(a._operationId) - WEBHOOK_ORDER.indexOf(b._operationId));
    for (const item of items) delete item._operationId;
    folders.push(folder.item ? { ...folder, item: items } : items[0]!);
  }
  const description = [
    typeof collection.info?.description === "object" ? collection.info.description.content : (collection.info?.description ?? ""),
    "",
    "Set `api_key` (and `webhook_url`, an https URL that answers 2xx, for the webhook requests) in your environment.",
    "The Webhooks folder creates a test webhook, exercises it and deletes it again; its rotate-secret request replaces your account's signing secret.",
  ].join("\n");
  const finished: Json = {
    ...collection,
    info: { ...collection.info, name: "Courier Tracking API", description, schema: "https://schema.getpostman.com/json/collection/v2.1.0/collection.json" },
    item: folders,
    variable: [
      { key: "baseUrl", value: baseUrl, type: "string" },
      { key: "api_key", value: "", type: "string", description: "Your API key (`ctk_…`)." },
      { key: "webhook_url", value: "", type: "string", description: "An https URL of yours that answers 2xx to POST." },
      { key: "webhook_id", value: "", type: "string", description: "Set by the Create a webhook request's test script." },
    ],
  };
  delete finished.auth;
  // Saved examples keep the converter's own auth variable name; one spelling everywhere.
  return JSON.parse(JSON.stringify(finished).replaceAll("{{apiKey}}", "{{api_key}}")) as Json;
}
