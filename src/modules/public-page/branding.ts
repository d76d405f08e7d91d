/** Per-account page settings and branding (docs/tracking-page.md#branding): read with defaults, checked, written. */
import { fileTypeFromBuffer } from "file-type";
import type { Db } from "../../db/client.ts";
import { RequestValidationError } from "../../lib/errors.ts";
import type { BrandingPatch } from "./model.ts";

export interface Branding {
  publicLinksEnabled: boolean;
  displayName: string | null;
  logoType: string | null;
  logoData: string | null;
  accentColor: string | null;
  supportUrl: string | null;
  supportEmail: string | null;
  showReference: boolean;
  /** https origins allowed to frame the page; empty: none. */
  frameAncestors: string[];
  updatedAt: string | null;
}

/** Largest logo accepted, bytes (decoded): a page budget of 30 KB leaves room for a small logo only. */
export const MAX_LOGO_BYTES = 16 * 1024;
/** The page background the accent colour is checked against. */
const PAGE_BACKGROUND = "#ffffff";
/** WCAG 2.2 AA minimum contrast for normal text (SC 1.4.3). */
const MIN_CONTRAST = 4.5;

const DEFAULTS: Branding = {
  publicLinksEnabled: true,
  displayName: null,
  logoType: null,
  logoData: null,
  accentColor: null,
  supportUrl: null,
  supportEmail: null,
  showReference: false,
  frameAncestors: [],
  updatedAt: null,
};

/** The account's branding, defaults where it set none. */
export async function brandingOf(db: Db, accountId: string): Promise<Branding> {
  const [r] = (await db.$client`
    select public_links_enabled, display_name, logo_type, logo_data, accent_color, support_url, support_email,
      show_reference, frame_ancestors, to_json(updated_at)#>>'{}' as updated_at
    from account_branding where account_id = ${accountId}
  `) as unknown as Record<string, string | boolean | null>[];
  if (!r) return DEFAULTS;
  return {
    publicLinksEnabled: r.public_links_enabled as boolean,
    displayName: r.display_name as string | null,
    logoType: r.logo_type as string | null,
    logoData: r.logo_data as string | null,
    accentColor: r.accent_color as string | null,
    supportUrl: r.support_url as string | null,
    supportEmail: r.support_email as string | null,
    showReference: r.show_reference as boolean,
    frameAncestors: r.frame_ancestors ? String(r.frame_ancestors).split(" ") : [],
    updatedAt: r.updated_at as string | null,
  };
}

/** Relative luminance of `#rrggbb` (WCAG 2.2, "relative luminance"). */
function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** Contrast ratio of two `#rrggbb` colours, 1 to 21 (WCAG 2.2, "contrast ratio"). */
function contrastRatio(a: string, b: string): number {
  const [la, lb] = [luminance(a), luminance(b)];
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

const invalid = (field: string, msg: string) =>
  new RequestValidationError([{ loc: ["body", field], msg, type: "value_error" }]);

/** The logo's checked bytes: PNG only, by content (not by the declared type), at most {@link MAX_LOGO_BYTES}. */
async function checkLogo(base64: string): Promise<string> {
  const bytes = Buffer.from(base64, "base64");
  if (bytes.byteLength === 0 || bytes.byteLength > MAX_LOGO_BYTES)
    throw invalid("logo_png_base64", `Logo must be a PNG of 1 to ${MAX_LOGO_BYTES} bytes`);
  const type = await fileTypeFromBuffer(bytes);
  if (type?.mime !== "image/png") throw invalid("logo_png_base64", "Logo must be a PNG image");
  return bytes.toString("base64");
}

/**
 * Applies a PATCH: fields sent are set (null clears), others stay. Checks what the schema cannot: the accent's
 * contrast against the page (WCAG AA 4.5:1) and the logo's real type and size.
 * @throws RequestValidationError (422) naming the field
 */
export async function updateBranding(
  db: Db,
  accountId: string,
  patch: BrandingPatch,
  nowMs: number,
): Promise<Branding> {
  const cur = await brandingOf(db, accountId);
  if (patch.accent_color) {
    const ratio = contrastRatio(patch.accent_color.toLowerCase(), PAGE_BACKGROUND);
    if (ratio < MIN_CONTRAST)
      throw invalid(
        "accent_color",
        `Accent colour has a contrast of ${ratio.toFixed(2)}:1 against the white page; WCAG AA needs at least ${MIN_CONTRAST}:1 (choose a darker colour)`,
      );
  }
  const logoData =
    patch.logo_png_base64 === undefined
      ? cur.logoData
      : patch.logo_png_base64 === null
        ? null
        : await checkLogo(patch.logo_png_base64);
  const next: Branding = {
    publicLinksEnabled: patch.public_links_enabled ?? cur.publicLinksEnabled,
    displayName: patch.display_name === undefined ? cur.displayName : patch.display_name,
    logoType: logoData ? "image/png" : null,
    logoData,
    accentColor: patch.accent_color === undefined ? cur.accentColor : (patch.accent_color?.toLowerCase() ?? null),
    supportUrl: patch.support_url === undefined ? cur.supportUrl : patch.support_url,
    supportEmail: patch.support_email === undefined ? cur.supportEmail : patch.support_email,
    showReference: patch.show_reference ?? cur.showReference,
    frameAncestors:
      patch.frame_ancestors === undefined
        ? cur.frameAncestors
        : [...new Set((patch.frame_ancestors ?? []).map((o) => o.toLowerCase()))],
    updatedAt: new Date(nowMs).toISOString(),
  };
  await db.$client`
    insert into account_branding (account_id, public_links_enabled, display_name, logo_type, logo_data, accent_color,
      support_url, support_email, show_reference, frame_ancestors, updated_at)
    values (${accountId}, ${next.publicLinksEnabled}, ${next.displayName}, ${next.logoType}, ${next.logoData},
      ${next.accentColor}, ${next.supportUrl}, ${next.supportEmail}, ${next.showReference},
      ${next.frameAncestors.length ? next.frameAncestors.join(" ") : null}, ${next.updatedAt})
    on conflict (account_id) do update set public_links_enabled = excluded.public_links_enabled,
      display_name = excluded.display_name, logo_type = excluded.logo_type, logo_data = excluded.logo_data,
      accent_color = excluded.accent_color, support_url = excluded.support_url, support_email = excluded.support_email,
      show_reference = excluded.show_reference, frame_ancestors = excluded.frame_ancestors, updated_at = excluded.updated_at
  `;
  return next;
}

/** The API shape of a branding (the logo as a flag, not its bytes). */
export function brandingJson(b: Branding) {
  return {
    public_links_enabled: b.publicLinksEnabled,
    display_name: b.displayName,
    has_logo: b.logoData !== null,
    accent_color: b.accentColor,
    support_url: b.supportUrl,
    support_email: b.supportEmail,
    show_reference: b.showReference,
    frame_ancestors: b.frameAncestors,
    updated_at: b.updatedAt,
  };
}

/** The account's page views of the last `days` UTC days that had any, newest first. */
export async function recentViews(db: Db, accountId: string, nowMs: number, days = 14) {
  const since = new Date(nowMs - days * 86_400_000).toISOString().slice(0, 10);
  return (await db.$client`
    select to_char(day, 'YYYY-MM-DD') as day, views from public_page_views
    where account_id = ${accountId} and day >= ${since} order by day desc
  `) as unknown as { day: string; views: number }[];
}
