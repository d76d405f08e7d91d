/** /dashboard/branding: the tracking page's settings, a preview on a sample shipment, and its views. */
import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import { RequestValidationError } from "../../../lib/errors.ts";
import { brandingOf, MAX_LOGO_BYTES, recentViews, updateBranding } from "../../public-page/branding.ts";
import { pickLang } from "../../public-page/i18n.ts";
import { BrandingPatchBody, type BrandingPatch } from "../../public-page/model.ts";
import { previewPage } from "../../public-page/preview.ts";
import {
  fileBytes,
  htmlResponse,
  pageSession,
  redirect,
  str,
  withForm,
  withSession,
  type FormBody,
  type RouteDeps,
} from "../http.ts";
import type { DashboardSession } from "../session.ts";
import { brandingPage, type BrandingState } from "../views/branding.ts";

export const BRANDING_PATH = "/dashboard/branding";
/**
 * The settings form's body cap, bytes: the logo's (16 KiB, docs/tracking-page.md#branding) plus 8 KiB for the
 * other fields (at most ~4 KB of text) and the multipart framing; read as a capped stream, larger gets the 413 page.
 */
export const BRANDING_FORM_BYTES = MAX_LOGO_BYTES + 8 * 1024;

const orNull = (v: string) => (v.trim() === "" ? null : v.trim());

/** The form as a PATCH body: empty fields clear, unchecked boxes are false. */
function patchOf(form: FormBody): BrandingPatch {
  const origins = str(form, "frame_ancestors")
    .split(/\s+/)
    .filter((o) => o !== "");
  return {
    public_links_enabled: str(form, "public_links_enabled") === "on",
    display_name: orNull(str(form, "display_name")),
    accent_color: orNull(str(form, "accent_color")),
    support_url: orNull(str(form, "support_url")),
    support_email: orNull(str(form, "support_email")),
    show_reference: str(form, "show_reference") === "on",
    frame_ancestors: origins,
    ...(str(form, "remove_logo") === "on" ? { logo_png_base64: null } : {}),
  };
}

/** Routes for /dashboard/branding…. */
export function brandingRoutes(rd: RouteDeps) {
  const { deps } = rd;
  const page = async (s: DashboardSession, extra: Partial<BrandingState> = {}, status = 200) => {
    const [branding, views] = await Promise.all([
      brandingOf(deps.db, s.account.id),
      recentViews(deps.db, s.account.id, deps.clock.now()),
    ]);
    return htmlResponse(brandingPage(pageSession(s), { branding, views, ...extra }), status);
  };
  return new Elysia()
    .get("/dashboard/branding", ({ request, cookie, query }) =>
      withSession(rd, { request, cookie }, (s) =>
        page(s, query.done === "saved" ? { flash: { kind: "ok", text: "Tracking page settings saved." } } : {}),
      ),
    )
    .post("/dashboard/branding", ({ request, cookie, body }) =>
      withForm(rd, { request, cookie, body }, async (s, form) => {
        const patch = patchOf(form);
        if (!Value.Check(BrandingPatchBody, patch)) {
          const first = [...Value.Errors(BrandingPatchBody, patch)][0];
          const field = first?.path.split("/")[1]?.replace(/_/g, " ") ?? "a field";
          return page(s, { error: `Check ${field}: it is not in the expected form.` }, 422);
        }
        // The upload goes through the API's own check (PNG by content, size) in updateBranding.
        const logo = fileBytes(form, "logo");
        if (logo) patch.logo_png_base64 = Buffer.from(logo).toString("base64");
        try {
          await updateBranding(deps.db, s.account.id, patch, deps.clock.now());
        } catch (e) {
          if (!(e instanceof RequestValidationError)) throw e;
          return page(s, { error: e.items[0]?.msg ?? "A field is invalid." }, 422);
        }
        return redirect("/dashboard/branding?done=saved");
      }),
    )
    .get("/dashboard/branding/preview", ({ request, cookie, query }) =>
      withSession(rd, { request, cookie }, async (s) => {
        const lang = pickLang(
          typeof query.lang === "string" ? query.lang : null,
          request.headers.get("accept-language"),
        );
        const p = previewPage(await brandingOf(deps.db, s.account.id), lang, "/dashboard/branding/logo");
        return new Response(p.body, { headers: p.headers });
      }),
    )
    .get("/dashboard/branding/logo", ({ request, cookie }) =>
      withSession(rd, { request, cookie }, async (s) => {
        const b = await brandingOf(deps.db, s.account.id);
        if (!b.logoData) return new Response(null, { status: 404 });
        return new Response(Buffer.from(b.logoData, "base64"), { headers: { "content-type": "image/png" } });
      }),
    );
}
