/**
 * The public tracking page `/t/{token}`, its JSON `/t/{token}.json`, its logo and stylesheet, and
 * `GET|PATCH /v1/account/branding` (docs/tracking-page.md). The page reads stored data only: no courier call.
 */
import { Elysia } from "elysia";
import type { AppDeps } from "../../deps.ts";
import { errorResponses } from "../../lib/errors.ts";
import { authPlugin } from "../../http/auth.ts";
import { jsonBodies } from "../../http/body.ts";
import { idempotent } from "../../http/idempotency.ts";
import type { SocketAddressOf } from "../../http/server.ts";
import { brandingJson, brandingOf, updateBranding } from "./branding.ts";
import { brandingModels } from "./model.ts";
import { cssText, linkOpener } from "./serve.ts";

/** The page routes (no key; limited per address and per token) and the branding API. */
export function publicPageModule(deps: AppDeps, socketAddressOf: SocketAddressOf = () => undefined) {
  const open = linkOpener(deps, socketAddressOf);
  return (
    new Elysia()
      .get(
        "/t/assets/page.css",
        () =>
          new Response(cssText, {
            headers: {
              "content-type": "text/css; charset=utf-8",
              "cache-control": "public, max-age=31536000, immutable",
              "x-content-type-options": "nosniff",
            },
          }),
        { detail: { hide: true } },
      )
      // The token is read from the raw path (never percent-decoded): a malformed escape is just an unknown token.
      .get(
        "/t/:token",
        ({ request }) => {
          const raw = rawSegment(request, 2);
          return raw.endsWith(".json") ? open(request, raw.slice(0, -5), "json") : open(request, raw, "html");
        },
        { detail: { hide: true } },
      )
      .get("/t/:token/logo", ({ request }) => open(request, rawSegment(request, 2), "logo"), { detail: { hide: true } })
      .options(
        "/t/:token",
        () =>
          new Response(null, {
            status: 204,
            headers: {
              "access-control-allow-origin": "*",
              "access-control-allow-methods": "GET",
              "access-control-max-age": "86400",
            },
          }),
        { detail: { hide: true } },
      )
      .use(brandingRoutes(deps))
  );
}

/** Path segment `i` of the request as sent (`/t/{token}` → 2), not decoded. */
const rawSegment = (request: Request, i: number) => new URL(request.url).pathname.split("/")[i] ?? "";

const errs = { ...errorResponses.authed, ...errorResponses.common };

/** `GET|PATCH /v1/account/branding`. */
function brandingRoutes(deps: AppDeps) {
  return new Elysia({ prefix: "/v1/account" })
    .use(jsonBodies())
    .use(brandingModels)
    .use(authPlugin(deps))
    .get(
      "/branding",
      async ({ auth }) => ({ success: true as const, data: brandingJson(await brandingOf(deps.db, auth.account.id)) }),
      {
        apiKey: true,
        response: { 200: "BrandingResult", ...errs },
        detail: {
          operationId: "getBranding",
          summary: "Get the tracking page's branding",
          tags: ["Tracking page"],
          description:
            "The account's public tracking page settings: whether links are on, display name, logo (as `has_logo`), accent colour, support URL and e-mail, whether the page shows your reference, and who may frame it.",
        },
      },
    )
    .patch(
      "/branding",
      (c) =>
        idempotent(deps, c, async () => ({
          success: true as const,
          data: brandingJson(await updateBranding(deps.db, c.auth.account.id, c.body, deps.clock.now())),
        })),
      {
        apiKey: true,
        body: "BrandingUpdate",
        response: { 200: "BrandingResult", ...errs },
        detail: {
          operationId: "updateBranding",
          summary: "Change the tracking page's branding",
          tags: ["Tracking page"],
          description:
            "Changes the public tracking page of every followed shipment (`public_url`): fields sent are set, null clears one, fields not sent stay. `accent_color` must reach WCAG AA contrast (4.5:1) on the white page; `logo_png_base64` is a PNG of at most 16 KiB. `public_links_enabled: false` turns every link off (pages 404, `public_url` null). Free: no quota.",
        },
      },
    );
}
