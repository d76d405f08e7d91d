/** A courier's failed-attempt (NDR) reason table and how a checkpoint's reason is read from it (docs/ndr.md). */
import type { RawCheckpoint } from "../../../domain/checkpoint.ts";
import { carriesReason, reasonFromRemark, type ReasonCode } from "../../../domain/ndr.ts";
import type { SubStatus } from "../../../domain/states.ts";

/** One row of a courier's table. */
export interface ReasonRow {
  /** The courier's code as the adapter stores it in `rawCode` (upper case), or null for a remark-only row. */
  code: string | null;
  reason: ReasonCode;
  /** Where the meaning comes from: a fixture file in the folder, or the courier's documentation (README.md names it). */
  source: string;
  /** A checkpoint as the adapter stores it that this row maps (the row's test). */
  example: Pick<RawCheckpoint, "state" | "subStatus" | "rawCode" | "activity" | "remark">;
}

export interface ReasonTable {
  rows: readonly ReasonRow[];
}

/** Reasons a sub-status already says, whatever the remark (the status tables set them from the courier's codes). */
const BY_SUB: Partial<Record<SubStatus, ReasonCode>> = { damaged: "damaged", lost: "lost" };

/**
 * The reason of one checkpoint: "" when it carries none; else the remark keywords, the courier's code, the
 * sub-status, and finally `other` with `mapped: false` (docs/ndr.md, "How a reason is read").
 */
export function reasonOf(
  table: ReasonTable,
  c: Pick<RawCheckpoint, "state" | "subStatus" | "rawCode" | "activity" | "remark">,
): { reason: ReasonCode | ""; mapped: boolean } {
  if (!carriesReason(c)) return { reason: "", mapped: true };
  const byText = reasonFromRemark(c.remark ?? "") ?? reasonFromRemark(c.activity);
  if (byText) return { reason: byText, mapped: true };
  const code = c.rawCode?.toUpperCase();
  const row = code ? table.rows.find((r) => r.code === code) : undefined;
  if (row) return { reason: row.reason, mapped: true };
  const bySub = c.subStatus ? BY_SUB[c.subStatus] : undefined;
  if (bySub) return { reason: bySub, mapped: true };
  return { reason: "other", mapped: false };
}
