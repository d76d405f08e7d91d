/** Every courier's NDR reason table by adapter id, and a stored checkpoint's reason (docs/ndr.md). */
import type { RawCheckpoint } from "../../domain/checkpoint.ts";
import type { ReasonCode } from "../../domain/ndr.ts";
import { reasonOf, type ReasonTable } from "./adapters/reasons.ts";
import { courierBySlug, type AdapterId } from "./catalogue.ts";
import { ARAMEX_REASONS } from "./carriers/aramex/reasons.ts";
import { BLUEDART_REASONS } from "./carriers/bluedart/reasons.ts";
import { DELHIVERY_REASONS } from "./carriers/delhivery/reasons.ts";
import { DHL_REASONS } from "./carriers/dhl/reasons.ts";
import { DTDC_REASONS } from "./carriers/dtdc/reasons.ts";
import { ECOMEXPRESS_REASONS } from "./carriers/ecomexpress/reasons.ts";
import { FEDEX_REASONS } from "./carriers/fedex/reasons.ts";
import { TRACK17_REASONS } from "./carriers/track17/reasons.ts";
import { UPS_REASONS } from "./carriers/ups/reasons.ts";
import { XPRESSBEES_REASONS } from "./carriers/xpressbees/reasons.ts";

export const REASON_TABLES: Readonly<Record<AdapterId, ReasonTable>> = {
  delhivery: DELHIVERY_REASONS,
  bluedart: BLUEDART_REASONS,
  dhl: DHL_REASONS,
  fedex: FEDEX_REASONS,
  ups: UPS_REASONS,
  dtdc: DTDC_REASONS,
  aramex: ARAMEX_REASONS,
  ecomexpress: ECOMEXPRESS_REASONS,
  xpressbees: XPRESSBEES_REASONS,
  track17: TRACK17_REASONS,
};

const EMPTY: ReasonTable = { rows: [] };

type Cp = Pick<RawCheckpoint, "state" | "subStatus" | "rawCode" | "activity" | "remark">;

/** The reason of one checkpoint of courier `slug` ("" when it carries none), and whether a table or keyword knew it. */
export function checkpointReasonOf(slug: string, c: Cp): { reason: ReasonCode | ""; mapped: boolean } {
  const adapter = courierBySlug(slug)?.adapter as AdapterId | undefined;
  return reasonOf((adapter && REASON_TABLES[adapter]) || EMPTY, c);
}

/** The reason of one checkpoint of courier `slug`, "" when it carries none. */
export const checkpointReason = (slug: string, c: Cp): ReasonCode | "" => checkpointReasonOf(slug, c).reason;

/** The shipment's reason: that of its newest checkpoint carrying one (checkpoints newest first), or null. */
export function latestReason(slug: string, checkpoints: readonly Cp[]): ReasonCode | null {
  for (const c of checkpoints) {
    const r = checkpointReason(slug, c);
    if (r) return r;
  }
  return null;
}
