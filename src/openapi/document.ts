/**
 * The OpenAPI 3.1 document at `/openapi.json` and Swagger UI at `/docs` (assets from `swagger-ui-dist`, no CDN).
 * Operations come from the routes' TypeBox schemas via `@elysiajs/openapi`; {@link openApiDocument} adds JSON
 * bodies, hoisted components, examples, headers, 413s, `links` and the `webhooks` section
 * (Why: docs/architecture.md#schemas-one-registration-per-body).
 */
import { dirname, join } from "node:path";
import { toOpenAPISchema } from "@elysiajs/openapi";
import { Elysia, type AnyElysia } from "elysia";
import { AppError, ValidationErrorSchema } from "../lib/errors.ts";
import { DEMO_LIMIT_PER_HOUR } from "../domain/limits.ts";
import { errorComponent } from "./errors.ts";
import { errorMessages } from "./examples.ts";
import { webhookEvents } from "./webhooks.ts";
import { addIdempotency, REPLAYED_HEADER_DOC } from "./features.ts";
import { addLinks } from "./links.ts";
import type { Json } from "./json.ts";
import { finishOperation, hoistInside } from "./operations.ts";

const SWAGGER_DIR = dirname(Bun.resolveSync("swagger-ui-dist/package.json", import.meta.dir));
const ASSETS = new Set([
  "swagger-ui.css",
  "swagger-ui-bundle.js",
  "swagger-ui-standalone-preset.js",
  "favicon-32x32.png",
  "favicon-16x16.png",
]);

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
  {
    name: "Estimates",
    description:
      "A delivery date before shipping, from the service's own delivered history; no courier call, no quota.",
  },
  {
    name: "Shipments",
    description: "Follow shipments in bulk, list them, read their stored records (no quota), stop following.",
  },
  {
    name: "Webhooks",
    description:
      "Manage the https endpoints that receive signed event deliveries for followed shipments; redeliver and recover events.",
  },
  {
    name: "Events",
    description: "The account's events of the last 30 days, with stable ids and the payload a delivery carries.",
  },
  {
    name: "Tracking page",
    description:
      "The branded public tracking page behind every followed shipment's `public_url` (`/t/{token}`, no key, no personal data): its settings and branding.",
  },
  { name: "Demo", description: `Public demo tracking: ${DEMO_LIMIT_PER_HOUR} requests per hour per IP, no key.` },
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
  const view = {
    getGlobalRoutes: () => bare,
    getGlobalDefinitions: () => global.getGlobalDefinitions?.(),
  } as unknown as AnyElysia;
  const generated = toOpenAPISchema(
    view,
    { paths: [/^\/docs/, "/healthz", "/readyz", "/metrics", /^\/dashboard/, "/postman", "/openapi.json"] },
    undefined,
    undefined,
    "3.1.0",
  ) as Json;
  const byKey = new Map(
    routes.map((r) => [`${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, "{$1}")}`, r as { hooks?: Json }]),
  );
  const schemas: Json = {
    Error: errorComponent(),
    ValidationError: JSON.parse(JSON.stringify(ValidationErrorSchema)),
  };
  // Models become components; schemas nested by title are hoisted; Elysia's `$id` stamp is dropped.
  const stamp = (k: string, v: unknown) =>
    k === "$id" && typeof v === "string" && v.startsWith("#/components/schemas/") ? undefined : v;
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
  addLinks(paths);
  const doc: Json = {
    openapi: "3.1.0",
    info: {
      title: "Courier Tracking API",
      version: "1.0.0",
      description: DESCRIPTION,
      contact: { name: "Support", url: `${opts.publicBaseUrl}/dashboard` },
      license: LICENSE,
    },
    servers: [{ url: opts.publicBaseUrl }],
    tags: TAGS,
    paths,
    webhooks: webhookEvents(),
    components: {
      securitySchemes: {
        ApiKeyAuth: {
          type: "apiKey",
          in: "header",
          name: "X-API-Key",
          description: "Your API key (`ctk_…`), from the dashboard.",
        },
      },
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
    .get("/docs", () => new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }), {
      detail: { hide: true },
    })
    .get(
      "/docs/init.js",
      () =>
        new Response(INIT, {
          headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=300" },
        }),
      { detail: { hide: true } },
    )
    .get(
      "/docs/assets/:file",
      ({ params }) => {
        if (!ASSETS.has(params.file)) throw new AppError("NOT_FOUND", "No such asset.");
        return new Response(Bun.file(join(SWAGGER_DIR, params.file)), {
          headers: { "cache-control": "public, max-age=86400" },
        });
      },
      { detail: { hide: true } },
    );
}
