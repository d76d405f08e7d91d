/**
 * What a public tracking link shows (docs/tracking-page.md#what-the-page-shows): the stored record only (no courier
 * call), in buyer words, with no personal data: no consignee, phone, address, metadata or courier free text.
 */
import { eq } from "drizzle-orm";
import { DateTime } from "luxon";
import type { AppDeps } from "../../deps.ts";
import type { ReasonCode } from "../../domain/ndr.ts";
import { WEBHOOK_SPELLING, type ShipmentState, type SubStatus } from "../../domain/states.ts";
import { shipmentColumns, shipments } from "../../db/schema/index.ts";
import { courierBySlug } from "../couriers/catalogue.ts";
import { rowToRecord } from "../following/store.ts";
import { type Branding, brandingOf } from "./branding.ts";
import { type Lang, words } from "./i18n.ts";
import type { LinkTarget } from "../following/public-links.ts";

/** Zone of the page's times: the destination's. Every Indian courier delivers in India (IST); others show UTC. */
const zoneOf = (country: string) => (country === "india" ? "Asia/Kolkata" : "UTC");

interface PageCheckpoint {
  /** UTC instant, ISO 8601. */
  at: string;
  /** The same instant in the destination's zone, `YYYY-MM-DDTHH:mm±hh:mm`. */
  local_time: string;
  status: string;
  text: string;
  /** City level only (see {@link cityOf}); "" when the courier gave none. */
  location: string;
}

export interface PageData {
  language: Lang;
  courier: { slug: string; name: string };
  tracking_number: string;
  status: string;
  status_text: string;
  delivered: boolean;
  /** Our predicted window (docs/predictions.md), `YYYY-MM-DD`; null when none (delivered, or no basis). */
  predicted_delivery: { earliest: string; latest: string; date: string } | null;
  /** The courier's own estimated date, `YYYY-MM-DD`, or null. */
  courier_estimate: string | null;
  stalled: boolean;
  failed_attempt: { reason_code: string; meaning: string; what_to_do: string } | null;
  time_zone: string;
  checkpoints: PageCheckpoint[];
  /** Only when the account's branding shows it. */
  reference: string | null;
  merchant: {
    name: string | null;
    accent_color: string | null;
    support_url: string | null;
    support_email: string | null;
    has_logo: boolean;
  };
  /** When the record last changed, ISO 8601 (the ETag's basis with the branding). */
  updated_at: string;
}

/**
 * A hub name cut to its city: the part before `_`, `,`, `(`, ` - ` or `/` ("Mumbai_Andheri_DC (Maharashtra)" →
 * "Mumbai"); a route "Delhi to Mumbai" keeps both cities. Anything that looks like a street line (digits) goes.
 */
function cityOf(location: string): string {
  return location
    .split(/\s+to\s+/i)
    .map((part) => (part.split(/[_,(/]|\s-\s/)[0] ?? "").replace(/\s+/g, " ").trim())
    .filter((c) => c !== "" && !/\d/.test(c) && c.length <= 40)
    .slice(0, 2)
    .join(" → ");
}

const spell = (s: string) => WEBHOOK_SPELLING[s as ShipmentState] ?? s;

function stateText(lang: Lang, state: ShipmentState, sub: SubStatus | null): string {
  const w = words(lang);
  return (sub && w.sub[sub]) || w.state[state] || state;
}

/** The page data of a link's follow, as of the stored record; undefined if the shipment is gone. */
export async function pageData(
  deps: Pick<AppDeps, "db" | "services">,
  link: LinkTarget,
  lang: Lang,
): Promise<{ data: PageData; branding: Branding } | undefined> {
  const [row] = await deps.db.select(shipmentColumns).from(shipments).where(eq(shipments.id, link.shipmentId));
  const courier = row ? courierBySlug(row.courier) : undefined;
  if (!row || !courier) return undefined;
  const branding = await brandingOf(deps.db, link.accountId);
  const record = rowToRecord(row);
  const state = record.state;
  const zone = zoneOf(courier.country);
  const w = words(lang);
  const predicted =
    state === "delivered" ? undefined : (await deps.services.transitStats.get()).predict(courier.slug, record);
  const reason = state === "exception" ? (row.reasonCode as ReasonCode | null) : null;
  const data: PageData = {
    language: lang,
    courier: { slug: courier.slug, name: courier.name },
    tracking_number: row.trackingNumber,
    status: spell(state),
    status_text: stateText(lang, state, record.subStatus),
    delivered: state === "delivered",
    predicted_delivery: predicted
      ? { earliest: predicted.earliest, latest: predicted.latest, date: predicted.date }
      : null,
    courier_estimate: state === "delivered" ? null : (row.estimatedDelivery ?? null),
    stalled: row.stalledAt !== null && state !== "delivered",
    failed_attempt:
      state === "exception" && (record.subStatus === "delivery_attempt_failed" || reason)
        ? {
            reason_code: reason ?? "other",
            meaning: w.reason[reason ?? "other"],
            what_to_do: w.whatToDo,
          }
        : null,
    time_zone: zone,
    checkpoints: record.checkpoints.slice(0, 100).map((c) => ({
      at: c.at,
      local_time:
        DateTime.fromISO(c.at, { zone: "utc" })
          .setZone(zone)
          .toISO({ suppressMilliseconds: true, suppressSeconds: true }) ?? c.at,
      status: spell(c.state),
      text: stateText(lang, c.state, c.subStatus),
      location: cityOf(c.location),
    })),
    reference: branding.showReference ? link.reference : null,
    merchant: {
      name: branding.displayName,
      accent_color: branding.accentColor,
      support_url: branding.supportUrl,
      support_email: branding.supportEmail,
      has_logo: branding.logoType !== null,
    },
    updated_at: row.updatedAt.toISOString(),
  };
  return { data, branding };
}
