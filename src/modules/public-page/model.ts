/** Schemas of `PATCH /v1/account/branding` (docs/tracking-page.md#branding), registered once as models. */
import { Type as T } from "@sinclair/typebox";
import { t } from "elysia";
import { schemaModels } from "../../http/models.ts";
import { Text } from "../../http/text.ts";

const NO_CONTROL = "^[^\\u0000-\\u001F\\u007F]*$";
/** An https URL without spaces, quotes or angle brackets (it becomes an `href`). */
const HTTPS_URL = "^https://[^\\s<>\"'`\\u0000-\\u001F\\u007F]+$";
/** An https origin: scheme, host (RFC 1123 name) and optional port, nothing else (a CSP source). */
const HTTPS_ORIGIN =
  "^https://[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*(?::[0-9]{1,5})?$";
const EMAIL = "^[^\\s@<>\"'`\\u0000-\\u001F\\u007F]{1,64}@[A-Za-z0-9.-]{1,189}\\.[A-Za-z]{2,63}$";

const nullable = <S extends ReturnType<typeof Text>>(s: S, description: string) =>
  t.Optional(t.Union([s, t.Null()], { description }));

export const BrandingPatchBody = t.Object(
  {
    public_links_enabled: t.Optional(
      t.Boolean({
        description:
          "False turns every public tracking link of the account off: `public_url` reads null and the pages answer 404. True turns them back on (the same links work again).",
      }),
    ),
    display_name: nullable(
      Text({ minLength: 1, maxLength: 80, pattern: NO_CONTROL }),
      "The shop name shown at the top of the page; null: none.",
    ),
    logo_png_base64: nullable(
      Text({ minLength: 1, maxLength: 22_000, pattern: "^[A-Za-z0-9+/]+={0,2}$" }),
      "The logo, a PNG of at most 16 KiB, base64; null removes it. Checked by content. SVG is not accepted (docs/tracking-page.md#branding).",
    ),
    accent_color: nullable(
      Text({ pattern: "^#[0-9A-Fa-f]{6}$" }),
      "`#rrggbb`, used for the page's headings and links; it must reach WCAG AA contrast (4.5:1) against the white page. Null: the default.",
    ),
    support_url: nullable(
      Text({ maxLength: 500, pattern: HTTPS_URL }),
      "An https page where buyers get help; shown with a failed delivery attempt and at the foot of the page.",
    ),
    support_email: nullable(Text({ maxLength: 254, pattern: EMAIL }), "An address buyers can write to."),
    show_reference: t.Optional(
      t.Boolean({ description: "Show your `reference` (e.g. order number) on the page. Default false." }),
    ),
    frame_ancestors: t.Optional(
      t.Union([t.Array(Text({ maxLength: 300, pattern: HTTPS_ORIGIN }), { maxItems: 10 }), t.Null()], {
        description:
          "https origins allowed to show the page in an `<iframe>` (CSP `frame-ancestors`); null or empty: none.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type BrandingPatch = typeof BrandingPatchBody.static;

const nullableString = (description: string) => T.Union([T.String(), T.Null()], { description });

const BrandingResponse = T.Object(
  {
    success: T.Literal(true),
    data: T.Object({
      public_links_enabled: T.Boolean(),
      display_name: nullableString("Shown at the top of the page."),
      has_logo: T.Boolean(),
      accent_color: nullableString("`#rrggbb`."),
      support_url: nullableString("https help page."),
      support_email: nullableString("Help address."),
      show_reference: T.Boolean(),
      frame_ancestors: T.Array(T.String(), { description: "Origins allowed to frame the page." }),
      updated_at: T.Union([T.String({ format: "date-time" }), T.Null()]),
    }),
  },
  { title: "BrandingResult" },
);

/** The branding request and success bodies as Elysia models. */
export const brandingModels = schemaModels("branding.models", {
  BrandingUpdate: BrandingPatchBody,
  BrandingResult: BrandingResponse,
});
