/** Every courier's NDR reason table by adapter id (from carriers/index.ts), and a stored checkpoint's reason (docs/ndr.md). */
import type { RawCheckpoint } from "../../domain/checkpoint.ts";
import type { ReasonCode } from "../../domain/ndr.ts";
import { reasonOf, type ReasonTable } from "./adapters/reasons.ts";
import { courierBySlug, type AdapterId } from "./catalogue.ts";
import { CARRIERS } from "./carriers/index.ts";

export const REASON_TABLES = Object.fromEntries(CARRIERS.map((c) => [c.id, c.reasons])) as Readonly<
  Record<AdapterId, ReasonTable>
>;

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
