/** The public tracking page (docs/tracking-page.md): per-account branding and settings, and views per day. */
import { boolean, date, integer, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.ts";

/** One row per account that changed its page settings; no row means the defaults (links on, no branding). */
export const accountBranding = pgTable("account_branding", {
  accountId: text("account_id")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  /** False turns every public link of the account off: `public_url` null, pages 404. */
  publicLinksEnabled: boolean("public_links_enabled").notNull().default(true),
  displayName: text("display_name"),
  /** `image/png` | `image/svg+xml`, with `logo_data` (base64 of the checked, sanitised bytes), or both null. */
  logoType: text("logo_type"),
  logoData: text("logo_data"),
  /** `#rrggbb`, checked for WCAG AA contrast against the page background. */
  accentColor: text("accent_color"),
  supportUrl: text("support_url"),
  supportEmail: text("support_email"),
  /** Whether the page shows the follow's `reference` (order number); off by default. */
  showReference: boolean("show_reference").notNull().default(false),
  /** CSP `frame-ancestors` sources allowed to embed the page (https origins, space-separated); null: none. */
  frameAncestors: text("frame_ancestors"),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

/** Public page and JSON views per account per UTC day; no address or token is kept. */
export const publicPageViews = pgTable(
  "public_page_views",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    day: date("day", { mode: "string" }).notNull(),
    views: integer("views").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.day] })],
);
