/**
 * The OpenAPI 3.1 document (`info.version` 1.0.0) at `/openapi.json` and
 * Swagger UI at `/docs`, its assets served from the pinned `swagger-ui-dist`
 * package so the page works with no internet (the plugin's own page loads
 * from a CDN).
 *
 * Operations come from the routes' TypeBox schemas through
 * `@elysiajs/openapi`'s `toOpenAPISchema`; {@link openApiDocument} then
 * finishes the document: JSON request bodies (the plugin drops them when a
 * global parser is set), named components with `$ref`s, examples for every
 * parameter, body and response (one per error code), the rate-limit and
 * request-id headers, 413 on every body, and the OpenAPI 3.1 `webhooks`
 * section for the five events with their signature headers.
 */
import { dirname, join } from "node:path";
import { toOpenAPISchema } from "@elysiajs/openapi";
import { Elysia, type AnyElysia } from "elysia";
import { AppError, CODE_STATUS, ErrorSchema, ValidationErrorSchema, type ErrorCode } from "../errors.ts";
import { PLANS } from "../modules/billing/plans.ts";
import { COURIERS } from "../modules/couriers/catalogue.ts";
import { TrackResponse } from "../modules/tracking/model.ts";
import { EVENT_TYPES, STATES, WEBHOOK_SPELLING, type EventType } from "../modules/tracking/states.ts";
import { sampleData } from "../modules/webhooks/payload.ts";

const SWAGGER_DIR = dirname(Bun.resolveSync("swagger-ui-dist/package.json", import.meta.dir));
const ASSETS = new Set(["swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "favicon-32x32.png", "favicon-16x16.png"]);

// The document is plain JSON; this file builds and rewrites it freely.
type Json = Record<string, any>;

const DESCRIPTION = `Tracking for Indian and international couriers: normalised shipment state and checkpoints,
signed webhooks when a followed shipment changes.

Every \`/v1\` request carries your API key in the \`X-API-Key\` header (get one in the dashboard).
Errors use one envelope, \`{ "success": false, "error": { "code", "message" } }\`; validation errors are
422 \`{ "detail": [{ "loc", "msg", "type" }] }\`. Every response carries \`X-Request-Id\`.
Only HTTPS is served. Request bodies are JSON, at most 64 KiB.

A Postman collection of every operation is served at [/postman](/postman) (variables \`baseUrl\`,
\`api_key\`, \`webhook_url\`). Webhook deliveries are described under **Webhooks** below: each is
signed with \`X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw body>\`.`;

const TAGS = [
  { name: "Tracking", description: "Shipment status and checkpoints. Counts against the monthly quota." },
  { name: "Couriers", description: "The courier catalogue. Does not count against the quota." },
  { name: "Webhooks", description: "Manage the https endpoints that receive signed event deliveries for followed shipments." },
  { name: "Demo", description: "Public demo tracking: 5 requests per hour per IP, no key." },
  { name: "Billing", description: "Public plan listing." },
  { name: "Webhook events", description: "What the service POSTs to your webhook URL (not operations you call)." },
];

// ---- examples --------------------------------------------------------------------------

const WH_ID = "wh_01937c1e5b8a7c4e9f3d2a1b0c9d8e7f";
const WEBHOOK = {
  id: WH_ID,
  url: "https://example.com/hooks/courier",
  events: ["tracking.delivered", "tracking.exception"],
  mode: "test",
  description: "Order updates",
  status: "active",
  failure_count: 0,
  created_at: "2026-11-05T10:00:00.000Z",
  updated_at: "2026-11-05T10:00:00.000Z",
};
const TRACK_EXAMPLE = (TrackResponse.examples as { success: true; data: unknown }[])[0]!;
const courier = (slug: string) => COURIERS.find((c) => c.slug === slug)!;
const view = (slug: string) => ({ slug, name: courier(slug).name });

/** Per operationId: parameter values, request body and success body examples (what Swagger UI and Postman prefill). */
const OPERATION_EXAMPLES: Record<string, { params?: Record<string, string | number>; body?: unknown; ok?: unknown }> = {
  trackShipment: { params: { courier: "delhivery", tracking_number: courier("delhivery").awb.example }, ok: TRACK_EXAMPLE },
  demoTrack: { params: { courier: "dhl", tracking_number: "1234567890" }, ok: { success: true, data: TRACK_EXAMPLE.data } },
  listCouriers: { ok: { success: true, data: { couriers: ["delhivery", "bluedart", "dhl"].map(view), count: 3 } } },
  detectCourier: { params: { tracking_number: courier("delhivery").awb.example }, ok: { success: true, data: { couriers: [view("delhivery")], count: 1 } } },
  getCourier: { params: { slug: "delhivery" }, ok: { success: true, data: view("delhivery") } },
  listPlans: { ok: { success: true, data: { plans: PLANS, count: PLANS.length } } },
  createWebhook: {
    body: { url: WEBHOOK.url, events: WEBHOOK.events, mode: "test", description: WEBHOOK.description },
    ok: { success: true, data: { ...WEBHOOK, secret: "whsec_3q2-7wEAAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRo" } },
  },
  listWebhooks: { ok: { success: true, data: { webhooks: [WEBHOOK], count: 1 } } },
  rotateWebhookSecret: { ok: { success: true, data: { secret: "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8" } } },
  getWebhook: { params: { webhook_id: WH_ID }, ok: { success: true, data: WEBHOOK } },
  updateWebhook: { params: { webhook_id: WH_ID }, body: { description: "Order updates (all events)", events: [...EVENT_TYPES] }, ok: { success: true, data: { ...WEBHOOK, events: [...EVENT_TYPES] } } },
  deleteWebhook: { params: { webhook_id: WH_ID } },
  testWebhook: { params: { webhook_id: WH_ID }, body: { event: "tracking.delivered" }, ok: { success: true, data: { delivered: true, status_code: 200, attempt_ms: 84 } } },
  listWebhookDeliveries: {
    params: { webhook_id: WH_ID, limit: 20, cursor: "dlv_01937c2a9e4b7d1f8c6a5b4e3d2c1b0a" },
    ok: {
      success: true,
      data: {
        deliveries: [
          {
            id: "dlv_01937c2a9e4b7d1f8c6a5b4e3d2c1b0a",
            event: "tracking.delivered",
            mode: "test",
            state: "delivered",
            attempts: 1,
            enqueued_at: "2026-11-05T10:01:00.000Z",
            next_attempt_at: null,
            last_status_code: 200,
            last_error: null,
            created_at: "2026-11-05T10:01:00.000Z",
            attempt_log: [{ attempt: 1, url: WEBHOOK.url, started_at: "2026-11-05T10:01:00.120Z", duration_ms: 84, status_code: 200, error: null, response_snippet: "ok" }],
          },
        ],
        count: 1,
        next_cursor: null,
      },
    },
  },
};

/** A sample message per error code, for the examples only (the service writes its own). */
const ERROR_MESSAGES: Record<ErrorCode, string> = {
  INVALID_API_KEY: "The API key is invalid or has been revoked.",
  QUOTA_EXCEEDED: "Monthly quota of 100 tracking requests used up; upgrade at https://localhost:8443/dashboard/billing",
  ACCOUNT_NEEDS_ATTENTION: "The account needs attention; contact support.",
  PLAN_UPGRADE_REQUIRED: "Live webhooks need the Growth or Business plan.",
  COURIER_NOT_FOUND: "Unknown courier slug 'delhivry'.",
  TRACKING_NOT_FOUND: "The courier has no record of this tracking number.",
  WEBHOOK_NOT_FOUND: "No webhook with this id.",
  NOT_FOUND: "Not found.",
  COURIER_NOT_SUPPORTED: "Tracking for this courier is not available through the API.",
  INVALID_TRACKING_NUMBER: "Not a Delhivery tracking number: expected 11 to 14 digits.",
  HTTPS_REQUIRED: "This API is served over HTTPS only; repeat the request with https://.",
  BAD_REQUEST: "Bad request.",
  WEBHOOK_IS_LIVE: "Test deliveries go to test webhooks only; this webhook is live.",
  WEBHOOK_LIMIT_REACHED: "An account can have at most 10 webhooks.",
  PAYLOAD_TOO_LARGE: "Request bodies are limited to 65536 bytes.",
  UNSUPPORTED_MEDIA_TYPE: "Unsupported media type.",
  RATE_LIMITED: "Rate limit of 10 requests per minute exceeded for this account; retry after 42 s.",
  DEMO_RATE_LIMITED: "The demo allows 5 requests per hour per IP address; sign up for a free API key.",
  INTERNAL_ERROR: "Unexpected error; quote the X-Request-Id when contacting support.",
  SERVICE_ERROR: "The courier's service answered with an error; retry.",
  SERVICE_UNAVAILABLE: "The service is temporarily unavailable; retry.",
  TEST_WEBHOOKS_DISABLED: "Test webhook deliveries are switched off.",
  TIMEOUT: "The courier's backend did not answer in time; retry.",
};

const VALIDATION_EXAMPLE = { detail: [{ loc: ["query", "tracking_number"], msg: "Field required", type: "missing" }] };

// ---- webhook events (spec: Events; CONTRACT 7) -----------------------------------------

const EVENT_WHEN: Record<EventType, string> = {
  "tracking.updated": "A re-check found more checkpoints than before, with no change to a state that has its own event.",
  "tracking.in_transit": "The shipment's status changed to in_transit.",
  "tracking.out_for_delivery": "The shipment's status changed to out_for_delivery.",
  "tracking.delivered": "The shipment's status changed to delivered. Terminal: the service stops following the shipment.",
  "tracking.exception": "The status changed to exception, returned or cancelled; `data.status` tells them apart (returned and cancelled are terminal).",
};

const nullable = (schema: Json) => ({ anyOf: [schema, { type: "null" }] });
const WEBHOOK_STATUSES = [...new Set(STATES.map((s) => WEBHOOK_SPELLING[s]))];

const WEBHOOK_SCHEMAS: Json = {
  WebhookCheckpoint: {
    title: "WebhookCheckpoint",
    type: "object",
    required: ["activity", "checkpoint_state", "courier_name", "date", "time", "location"],
    properties: {
      activity: { type: "string", description: "The courier's description of the event." },
      checkpoint_state: { type: "string", enum: WEBHOOK_STATUSES },
      courier_name: { type: "string" },
      date: { type: "string", description: "DD-Mon-YYYY, courier local time.", examples: ["05-Nov-2026"] },
      time: { type: "string", description: "HH:MM, 24-hour, courier local time.", examples: ["13:22"] },
      location: { type: "string" },
    },
  },
  WebhookPayload: {
    title: "WebhookPayload",
    type: "object",
    description:
      "The exact raw bytes are signed: verify `X-Service-Signature` before parsing. Delivery is at-least-once; `event` + `data.courier` + `data.tracking_number` + `enqueued_at` is fixed per event (deduplicate on it). `data` is rebuilt from the freshest record on each retry.",
    required: ["event", "enqueued_at", "data"],
    properties: {
      event: { type: "string", enum: [...EVENT_TYPES] },
      enqueued_at: { type: "string", format: "date-time", description: "ISO 8601 UTC, to the second.", examples: ["2026-11-05T13:30:00Z"] },
      data: {
        type: "object",
        required: ["tracking_number", "courier", "status", "most_recent_status", "origin_city", "destination_city", "delivered_date", "checkpoints", "enqueued_at"],
        properties: {
          tracking_number: { type: "string" },
          courier: { type: "string", description: "Courier slug; for a test delivery it begins with `synthetic-test-`." },
          status: { type: "string", enum: WEBHOOK_STATUSES },
          most_recent_status: { type: "string", description: "The service's own short label." },
          origin_city: nullable({ type: "string" }),
          destination_city: nullable({ type: "string" }),
          delivered_date: nullable({ type: "string", description: "DD-Mon-YYYY." }),
          checkpoints: nullable({
            type: "array",
            items: { $ref: "#/components/schemas/WebhookCheckpoint" },
            description: "The full known history, newest first: replace what you stored. null (payload over 256 KiB): keep the stored checkpoints.",
          }),
          enqueued_at: { type: "string", format: "date-time", description: "Same as the top-level `enqueued_at`." },
        },
      },
    },
  },
};

const DELIVERY_HEADERS = (event: EventType): Json[] => [
  {
    name: "X-Service-Signature",
    in: "header",
    required: true,
    description:
      "`sha256=` + hex HMAC-SHA256 of the exact raw body, keyed with the account's signing secret. Compare in constant time. After a rotation accept the old and the new secret for at least 15 minutes. No header is signed.",
    schema: { type: "string", pattern: "^sha256=[0-9a-f]{64}$" },
    example: "sha256=0f6c1b9b5d1e0e4a4f2f5d2f1c9b1e3a7d6b8c0e2f4a6b8d0e2f4a6b8c0e2f4a",
  },
  { name: "X-Webhook-Event", in: "header", required: true, description: "The event type; equals the body's `event`.", schema: { type: "string", enum: [event] } },
  {
    name: "X-Webhook-Delivery",
    in: "header",
    required: true,
    description: "`<webhook_id>-<attempt>`; changes on each retry. Not usable for deduplication.",
    schema: { type: "string" },
    example: `${WH_ID}-1`,
  },
  { name: "X-Webhook-Mode", in: "header", required: true, description: "`test` for a test fire to a test webhook, otherwise `live`.", schema: { type: "string", enum: ["test", "live"] } },
];

function webhookEvents(): Json {
  const out: Json = {};
  for (const event of EVENT_TYPES) {
    const sample = { event, enqueued_at: "2026-11-05T13:30:00Z", data: { ...sampleData(event, "2026-11-05T13:30:00Z"), courier: "delhivery" } };
    out[event] = {
      post: {
        operationId: `on${event.replace("tracking.", "Tracking_").replace(/_(\w)/g, (_, c: string) => c.toUpperCase())}`,
        summary: event,
        description: `${EVENT_WHEN[event]}\n\nPOSTed to each active webhook that lists \`${event}\`. Answer any 2xx within 5 seconds. Other outcomes are retried after 1 min, 5 min, 30 min, 2 h and 24 h (six attempts in all); 20 failed deliveries in a row deactivate a live webhook.`,
        tags: ["Webhook events"],
        security: [],
        parameters: DELIVERY_HEADERS(event),
        requestBody: {
          required: true,
          content: { "application/json": { schema: { allOf: [{ $ref: "#/components/schemas/WebhookPayload" }, { properties: { event: { const: event } } }] }, example: sample } },
        },
        responses: {
          "2XX": { description: "Delivered. Any 2xx counts; 301/302/303 are followed as a GET without body, 307/308 re-send the signed body." },
          default: { description: "Anything else (or no answer within 5 s) is retried per the schedule." },
        },
      },
    };
  }
  return out;
}

// ---- the document ----------------------------------------------------------------------

const HEADERS: Json = {
  "X-Request-Id": { description: "Id of this request; quote it to support.", schema: { type: "string" } },
  "RateLimit-Limit": { description: "Requests allowed per minute for the account.", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Requests left in the current minute.", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the current minute window resets.", schema: { type: "integer" } },
  "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" } },
};
const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const SUCCESS_TEXT: Record<string, string> = { "200": "OK.", "201": "Created.", "204": "No content." };
const OPTIONAL = Symbol.for("TypeBox.Optional");

function isEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Moves every titled schema under `node` into `schemas` (children first) and leaves a `$ref`; a title already used by a different schema stays inline. */
function hoist(node: unknown, schemas: Json): unknown {
  if (Array.isArray(node)) return node.map((n) => hoist(n, schemas));
  if (!node || typeof node !== "object") return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = k === "examples" || k === "example" ? v : hoist(v, schemas);
  const title = out.title;
  if (typeof title === "string" && /^[A-Za-z][A-Za-z0-9]*$/.test(title) && (out.type || out.anyOf || out.properties)) {
    if (!schemas[title]) schemas[title] = out;
    if (isEqual(schemas[title], out)) return ref("schemas", title);
  }
  return out;
}

function codesOf(description: string | undefined): ErrorCode[] {
  const m = /Codes: ([A-Z_, ]+)\.?$/.exec(description ?? "");
  return (m?.[1]?.split(",").map((c) => c.trim()) ?? []).filter((c): c is ErrorCode => c in CODE_STATUS);
}

function errorExamples(codes: ErrorCode[]): Json {
  const examples: Json = {};
  for (const code of codes) {
    const error: Json = { code, message: ERROR_MESSAGES[code] };
    if (code === "COURIER_NOT_FOUND") error.did_you_mean = "delhivery";
    examples[code] = { summary: code, value: { success: false, error } };
  }
  return examples;
}

function finishOperation(op: Json, route: { hooks?: Json } | undefined, schemas: Json): void {
  const ex = OPERATION_EXAMPLES[op.operationId] ?? {};
  const authed = Array.isArray(op.security) && op.security.length > 0;
  for (const p of op.parameters ?? []) {
    if (p.schema?.description && !p.description) p.description = p.schema.description;
    if (ex.params?.[p.name] !== undefined) p.example = ex.params[p.name];
  }
  if (op.requestBody) {
    const json = op.requestBody.content?.["application/json"];
    op.requestBody = {
      description: op.requestBody.description ?? "JSON body (read as JSON whatever the Content-Type), at most 64 KiB.",
      required: !(route?.hooks?.body && OPTIONAL in route.hooks.body),
      content: { "application/json": { schema: json?.schema ?? { type: "object" }, ...(ex.body !== undefined ? { example: ex.body } : {}) } },
    };
    op.responses["413"] = { description: "Request body over 64 KiB. Codes: PAYLOAD_TOO_LARGE.", content: { "application/json": { schema: { title: "Error" } } } };
  }
  const responses: Json = {};
  for (const status of Object.keys(op.responses).sort()) {
    const r = op.responses[status];
    const headers: Json = { "X-Request-Id": ref("headers", "X-Request-Id") };
    if (authed && (status.startsWith("2") || status === "429")) for (const h of ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]) headers[h] = ref("headers", h);
    if (status === "429" || status === "503") headers["Retry-After"] = ref("headers", "Retry-After");
    if (status === "204") {
      responses[status] = { description: r.description ?? SUCCESS_TEXT[status], headers };
      continue;
    }
    const schema = r.content?.["application/json"]?.schema ?? {};
    if (status.startsWith("2")) {
      const example = ex.ok ?? schema.examples?.[0];
      const description = !r.description || r.description.startsWith("Response for status") ? (SUCCESS_TEXT[status] ?? "Success.") : r.description;
      responses[status] = { description, headers, content: { "application/json": { schema: { ...schema, examples: undefined }, ...(example ? { example } : {}) } } };
    } else if (status === "422") {
      responses[status] = { description: "Validation error: every problem listed at once.", headers, content: { "application/json": { schema: ref("schemas", "ValidationError"), example: VALIDATION_EXAMPLE } } };
    } else {
      const codes = codesOf(r.description ?? schema.description);
      responses[status] = { description: r.description ?? "Error.", headers, content: { "application/json": { schema: ref("schemas", "Error"), examples: errorExamples(codes) } } };
    }
  }
  op.responses = hoist(responses, schemas);
  if (op.requestBody) op.requestBody = hoist(op.requestBody, schemas);
}

export interface OpenApiOptions {
  /** `PUBLIC_BASE_URL`: the document's only server. */
  publicBaseUrl: string;
}

const cache = new WeakMap<object, { count: number; doc: Json }>();

/**
 * The finished OpenAPI document of the whole app `app` belongs to (a plugin
 * sees its parent's routes through `getGlobalRoutes`). Cached per app until
 * the route count changes. The returned object is shared: do not mutate it.
 */
export function openApiDocument(app: AnyElysia, opts: OpenApiOptions): Json {
  // Protected in Elysia's types, public at run time; the OpenAPI plugin reads it the same way.
  const global = app as unknown as { getGlobalRoutes(): AnyElysia["routes"]; getGlobalDefinitions?(): unknown };
  const routes = global.getGlobalRoutes();
  const hit = cache.get(routes);
  if (hit && hit.count === routes.length) return hit.doc;
  // Without the global JSON parser the plugin emits the body schemas; only application/json is kept below.
  const bare = routes.map((r) => ({ ...r, hooks: { ...r.hooks, parse: undefined } }));
  const view = { getGlobalRoutes: () => bare, getGlobalDefinitions: () => global.getGlobalDefinitions?.() } as unknown as AnyElysia;
  const generated = toOpenAPISchema(view, { paths: [/^\/docs/, "/healthz", "/readyz", "/metrics", /^\/dashboard/, "/postman", "/openapi.json"] }, undefined, undefined, "3.1.0") as Json;
  const byKey = new Map(routes.map((r) => [`${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, "{$1}")}`, r as { hooks?: Json }]));
  const schemas: Json = {
    Error: { ...JSON.parse(JSON.stringify(ErrorSchema)), description: "The error envelope. `code` is one of the documented codes." },
    ValidationError: JSON.parse(JSON.stringify(ValidationErrorSchema)),
    ...WEBHOOK_SCHEMAS,
  };
  const paths: Json = {};
  for (const [path, ops] of Object.entries(generated.paths as Json).sort(([a], [b]) => a.localeCompare(b))) {
    const clean = path.length > 1 ? path.replace(/\/$/, "") : path;
    for (const [method, op] of Object.entries(ops as Json)) finishOperation(op, byKey.get(`${method} ${path}`), schemas);
    paths[clean] = { ...paths[clean], ...(ops as Json) };
  }
  const doc: Json = {
    openapi: "3.1.0",
    info: { title: "Courier Tracking API", version: "1.0.0", description: DESCRIPTION, contact: { name: "Support", url: `${opts.publicBaseUrl}/dashboard` } },
    servers: [{ url: opts.publicBaseUrl }],
    tags: TAGS,
    paths,
    webhooks: webhookEvents(),
    components: {
      securitySchemes: { ApiKeyAuth: { type: "apiKey", in: "header", name: "X-API-Key", description: "Your API key (`ctk_…`), from the dashboard." } },
      headers: HEADERS,
      schemas,
    },
  };
  const frozen = JSON.parse(JSON.stringify(doc)) as Json;
  cache.set(routes, { count: routes.length, doc: frozen });
  return frozen;
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Courier Tracking API — reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>`;

// Try-it-out goes to the origin that served the page (not the document's `servers`), so the
// page works whatever host name it was opened under (localhost, 127.0.0.1, a proxy's name).
const INIT = `window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  persistAuthorization: true,
  tryItOutEnabled: false,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: "StandaloneLayout",
  requestInterceptor: function (req) {
    var u = new URL(req.url, location.href);
    if (u.origin !== location.origin) req.url = location.origin + u.pathname + u.search;
    return req;
  },
  onComplete: function () { document.body.setAttribute("data-docs-ready", "true"); }
});`;

/** `/openapi.json` (the finished document) and the offline Swagger UI at `/docs`. */
export function openapiPlugin(opts: OpenApiOptions) {
  const self = new Elysia({ name: "openapi" });
  return self
    .get("/openapi.json", () => openApiDocument(self, opts), { detail: { hide: true } })
    .get("/docs", () => new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }), { detail: { hide: true } })
    .get("/docs/init.js", () => new Response(INIT, { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=300" } }), { detail: { hide: true } })
    .get(
      "/docs/assets/:file",
      ({ params }) => {
        if (!ASSETS.has(params.file)) throw new AppError("NOT_FOUND", "No such asset.");
        return new Response(Bun.file(join(SWAGGER_DIR, params.file)), { headers: { "cache-control": "public, max-age=86400" } });
      },
      { detail: { hide: true } },
    );
}
