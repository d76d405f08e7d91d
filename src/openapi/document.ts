/**
 * The OpenAPI 3.1 document at `/openapi.json` and Swagger UI at `/docs` (assets from `swagger-ui-dist`, no CDN).
 * Operations come from the routes' TypeBox schemas via `@elysiajs/openapi`; {@link openApiDocument} adds JSON
 * bodies, hoisted components, examples, headers, 413s and the `webhooks` section
 * (Why: docs/architecture.md#schemas-one-registration-per-body).
 */
import { dirname, join } from "node:path";
import { toOpenAPISchema } from "@elysiajs/openapi";
import { Elysia, type AnyElysia } from "elysia";
import { AppError, ValidationErrorSchema, type ErrorCode } from "../errors.ts";
import { codesIn, errorComponent, errorExamples, errorSchema } from "./errors.ts";
import { errorMessages, OPERATION_EXAMPLES, VALIDATION_EXAMPLE } from "./examples.ts";
import { webhookEvents } from "./webhooks.ts";
import { addIdempotency, FEATURE_EXAMPLES, REPLAYED_HEADER_DOC } from "./features.ts";

const SWAGGER_DIR = dirname(Bun.resolveSync("swagger-ui-dist/package.json", import.meta.dir));
const ASSETS = new Set(["swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "favicon-32x32.png", "favicon-16x16.png"]);

type Json = Record<string, any>;

const DESCRIPTION = `Tracking for Indian and international couriers: normalised shipment state and checkpoints,
signed webhooks when a followed shipment changes.

Every \`/v1\` request carries your API key in the \`X-API-Key\` header (get one in the dashboard).
Errors use one envelope, \`{ "success": false, "error": { "code", "message" } }\`; validation errors are
422 \`{ "detail": [{ "loc", "msg", "type" }] }\`. Every response carries \`X-Request-Id\`.
Only HTTPS is served. Request bodies are JSON, at most 64 KiB.

A Postman collection of every operation is served at [/postman](/postman) (variables \`baseUrl\`,
\`api_key\`, \`webhook_url\`). Webhook deliveries are described under **Webhooks** below: each is
signed with \`X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw body>\` and, for the Standard Webhooks
libraries, \`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`. Every POST (and PATCH) accepts an \`Idempotency-Key\`.`;

const TAGS = [
  { name: "Tracking", description: "Shipment status and checkpoints. Counts against the monthly quota." },
  { name: "Couriers", description: "The courier catalogue. Does not count against the quota." },
  { name: "Shipments", description: "Follow shipments in bulk, list them, read their stored records (no quota), stop following." },
  { name: "Webhooks", description: "Manage the https endpoints that receive signed event deliveries for followed shipments; redeliver and recover events." },
  { name: "Events", description: "The account's events of the last 30 days, with stable ids and the payload a delivery carries." },
  { name: "Demo", description: "Public demo tracking: 5 requests per hour per IP, no key." },
  { name: "Billing", description: "Public plan listing." },
];

const LICENSE = { name: "Proprietary", identifier: "LicenseRef-Proprietary" };



const HEADERS: Json = {
  "X-Request-Id": { description: "Id of this request; quote it to support.", schema: { type: "string" } },
  "RateLimit-Limit": { description: "Requests allowed per minute for the account.", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Requests left in the current minute.", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the current minute window resets.", schema: { type: "integer" } },
  "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" } },
  "Idempotent-Replayed": REPLAYED_HEADER_DOC,
};
const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const SUCCESS_TEXT: Record<string, string> = { "200": "OK.", "201": "Created.", "204": "No content." };
const OPTIONAL = Symbol.for("TypeBox.Optional");

function isEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** `node` with every titled schema under it (not `node` itself) hoisted by {@link hoist}. */
function hoistInside(node: Json, schemas: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = k === "examples" || k === "example" ? v : hoist(v, schemas);
  return out;
}

/** Moves every titled schema under `node` into `schemas` (children first) and leaves a `$ref`; a title already used by a different schema stays inline. */
function hoist(node: unknown, schemas: Json): unknown {
  if (Array.isArray(node)) return node.map((n) => hoist(n, schemas));
  if (!node || typeof node !== "object") return node;
  const out = hoistInside(node as Json, schemas);
  const title = out.title;
  if (typeof title === "string" && /^[A-Za-z][A-Za-z0-9]*$/.test(title) && (out.type || out.anyOf || out.properties)) {
    if (!schemas[title]) schemas[title] = out;
    if (isEqual(schemas[title], out)) return ref("schemas", title);
  }
  return out;
}

/**
 * The `$ref` of a request or success body: the module's named model (src/http/models.ts).
 * @throws Error for a schema written inline in a documented route
 */
function modelRef(schema: Json | undefined, where: string): Json {
  if (typeof schema?.$ref !== "string") throw new Error(`${where}: not a model; register the schema with the module's schemaModels and name it in the route`);
  return { $ref: schema.$ref };
}

function finishOperation(op: Json, route: { hooks?: Json } | undefined, messages: Record<ErrorCode, string>, models: Json): void {
  const ex = OPERATION_EXAMPLES[op.operationId] ?? FEATURE_EXAMPLES[op.operationId] ?? {};
  const authed = Array.isArray(op.security) && op.security.length > 0;
  for (const p of op.parameters ?? []) {
    if (p.schema?.description && !p.description) p.description = p.schema.description;
    if (ex.params?.[p.name] !== undefined) p.example = ex.params[p.name];
  }
  if (op.requestBody) {
    const body = typeof route?.hooks?.body === "string" ? models[route.hooks.body] : route?.hooks?.body;
    op.requestBody = {
      description: op.requestBody.description ?? "JSON body (read as JSON whatever the Content-Type), at most 64 KiB.",
      required: !(body && OPTIONAL in body),
      content: { "application/json": { schema: modelRef(op.requestBody.content?.["application/json"]?.schema, `${op.operationId} request body`), ...(ex.body !== undefined ? { example: ex.body } : {}) } },
    };
    op.responses["413"] = { description: "Request body over 64 KiB.", content: { "application/json": { schema: errorSchema(["PAYLOAD_TOO_LARGE"]) } } };
    op.responses["408"] = { description: "Request body not received within BODY_TIMEOUT_MS (10 s by default).", content: { "application/json": { schema: errorSchema(["REQUEST_TIMEOUT"]) } } };
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
      const description = !r.description || r.description.startsWith("Response for status") ? (SUCCESS_TEXT[status] ?? "Success.") : r.description;
      responses[status] = { description, headers, content: { "application/json": { schema: modelRef(schema, `${op.operationId} ${status}`), ...(ex.ok ? { example: ex.ok } : {}) } } };
    } else if (status === "422") {
      responses[status] = { description: "Validation error: every problem listed at once.", headers, content: { "application/json": { schema: ref("schemas", "ValidationError"), example: VALIDATION_EXAMPLE } } };
    } else {
      const codes = codesIn(schema);
      if (codes.length === 0) throw new Error(`${op.operationId} ${status}: the error schema declares no code (errorResponses.errorResponse)`);
      responses[status] = { description: r.description ?? schema.description ?? "Error.", headers, content: { "application/json": { schema: errorSchema(codes), examples: errorExamples(codes, messages) } } };
    }
  }
  op.responses = responses;
}

export interface OpenApiOptions {
  /** `PUBLIC_BASE_URL`: the document's only server. */
  publicBaseUrl: string;
}

const cache = new WeakMap<object, { count: number; doc: Json }>();

/** The finished document of the app `app` belongs to, cached until the route count changes; shared, do not mutate. */
export function openApiDocument(app: AnyElysia, opts: OpenApiOptions): Json {
  // Protected in Elysia's types, public at run time; the OpenAPI plugin reads it the same way.
  const global = app as unknown as { getGlobalRoutes(): AnyElysia["routes"]; getGlobalDefinitions?(): { type: Json } };
  const routes = global.getGlobalRoutes();
  const hit = cache.get(routes);
  if (hit && hit.count === routes.length) return hit.doc;
  // Without the modules' JSON parser (`jsonBodies`) the plugin emits the body schemas; only application/json is kept below.
  const bare = routes.map((r) => ({ ...r, hooks: { ...r.hooks, parse: undefined } }));
  const view = { getGlobalRoutes: () => bare, getGlobalDefinitions: () => global.getGlobalDefinitions?.() } as unknown as AnyElysia;
  const generated = toOpenAPISchema(view, { paths: [/^\/docs/, "/healthz", "/readyz", "/metrics", /^\/dashboard/, "/postman", "/openapi.json"] }, undefined, undefined, "3.1.0") as Json;
  const byKey = new Map(routes.map((r) => [`${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, "{$1}")}`, r as { hooks?: Json }]));
  const schemas: Json = {
    Error: errorComponent(),
    ValidationError: JSON.parse(JSON.stringify(ValidationErrorSchema)),
  };
  // Models become components; schemas nested by title are hoisted; Elysia's `$id` stamp is dropped.
  const stamp = (k: string, v: unknown) => (k === "$id" && typeof v === "string" && v.startsWith("#/components/schemas/") ? undefined : v);
  const modelComponents = JSON.parse(JSON.stringify(generated.components?.schemas ?? {}, stamp)) as Json;
  Object.assign(schemas, modelComponents);
  for (const [name, schema] of Object.entries(modelComponents)) schemas[name] = hoistInside(schema, schemas);
  const messages = errorMessages(opts.publicBaseUrl);
  const models = global.getGlobalDefinitions?.().type ?? {};
  const paths: Json = {};
  for (const [path, ops] of Object.entries(generated.paths as Json).sort(([a], [b]) => a.localeCompare(b))) {
    const clean = path.length > 1 ? path.replace(/\/$/, "") : path;
    for (const [method, op] of Object.entries(ops as Json)) {
      finishOperation(op, byKey.get(`${method} ${path}`), messages, models);
      if ((method === "post" || method === "patch") && clean.startsWith("/v1/")) addIdempotency(op);
    }
    paths[clean] = { ...paths[clean], ...(ops as Json) };
  }
  const doc: Json = {
    openapi: "3.1.0",
    info: { title: "Courier Tracking API", version: "1.0.0", description: DESCRIPTION, contact: { name: "Support", url: `${opts.publicBaseUrl}/dashboard` }, license: LICENSE },
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

// Try-it-out goes to the page's own origin, whatever host name it was opened under.
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
