/**
 * How a shipment's history is laid out (docs/performance.md, "History appended"): the newest 1–{@link CHUNK} checkpoints in
 * the shipment row (`history_tail`), older ones in sealed chunks of {@link CHUNK} that are written once. A change
 * that only adds checkpoints rewrites the tail and may seal a chunk; one that revises sealed checkpoints rewrites all.
 */
import { inArray } from "drizzle-orm";
import type { Tx } from "../../db/client.ts";
import { shipmentCheckpointChunks } from "../../db/schema/index.ts";
import type { StoredCheckpoint } from "../../domain/checkpoint.ts";
import type { ShipmentRecord } from "./normalise.ts";

/** The columns of the stored row (following/store.ts, `ShipmentRow`) that say how its history is laid out. */
interface HistoryRow {
  id: string;
  checkpoints: readonly StoredCheckpoint[];
  historyAt: Date | null;
  updatedAt: Date;
  historyTailLength: number;
  historyChunks: number[] | null;
}

/** Checkpoints per sealed chunk: enough (~5 KB raw) for PostgreSQL to compress the chunk inline (measured there). */
export const CHUNK = 40;

/** The field order of the compact encoding; `shipment_checkpoint` (migration 0027) decodes it in SQL. */
const FIELDS = [
  "state",
  "subStatus",
  "activity",
  "location",
  "localDate",
  "localTime",
  "at",
  "rawCode",
  "rawStatus",
  "remark",
] as const;

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MINUTE = 60_000;

/**
 * The instant as epoch ms and the courier's wall time as minutes east of UTC, when both come back as the same
 * strings (what `shipment_checkpoint` computes in SQL); undefined otherwise.
 */
function compactTime(c: StoredCheckpoint): [number, number] | undefined {
  const at = Date.parse(c.at);
  if (!ISO_MS.test(c.at) || !(at >= 0) || new Date(at).toISOString() !== c.at) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(c.localDate) || !/^\d{2}:\d{2}$/.test(c.localTime)) return undefined;
  const minute = Math.floor(at / MINUTE) * MINUTE;
  const offset = Math.round((Date.parse(`${c.localDate}T${c.localTime}:00Z`) - minute) / MINUTE);
  if (!(Math.abs(offset) <= 1_440)) return undefined;
  const local = new Date(minute + offset * MINUTE).toISOString();
  return local.slice(0, 10) === c.localDate && local.slice(11, 16) === c.localTime ? [at, offset] : undefined;
}

/**
 * A checkpoint with exactly the ten fields, each a string or null, as an array: of 9 with the times as numbers
 * when they come back exactly ({@link compactTime}), else of 10; anything else as stored (exact round trip).
 */
export function encodeCheckpoint(c: StoredCheckpoint): unknown {
  const keys = Object.keys(c);
  const r = c as unknown as Record<string, unknown>;
  const compact =
    keys.length === FIELDS.length && FIELDS.every((f) => f in r && (r[f] === null || typeof r[f] === "string"));
  if (!compact) return c;
  const t = compactTime(c);
  if (!t) return FIELDS.map((f) => r[f]);
  return [c.state, c.subStatus, c.activity, c.location, t[0], t[1], c.rawCode, c.rawStatus, c.remark];
}

/**
 * One stored checkpoint back to its object, exactly what `shipment_checkpoint` (migration 0027) answers in SQL:
 * the inverse of {@link encodeCheckpoint}. For a read that decodes in the process (docs/performance.md, "History
 * read encoded").
 */
export function decodeCheckpoint(e: unknown): StoredCheckpoint {
  if (!Array.isArray(e)) return e as StoredCheckpoint;
  if (e.length === FIELDS.length) return Object.fromEntries(FIELDS.map((f, i) => [f, e[i]])) as StoredCheckpoint;
  const at = e[4] as number;
  const local = new Date(at + (e[5] as number) * MINUTE).toISOString();
  return {
    state: e[0],
    subStatus: e[1],
    activity: e[2],
    location: e[3],
    localDate: local.slice(0, 10),
    localTime: local.slice(11, 16),
    at: new Date(at).toISOString(),
    rawCode: e[6],
    rawStatus: e[7],
    remark: e[8],
  };
}

/** What `shipment_history_stored(s)` (migration 0031) reads, decoded: the whole history, newest first. */
export const decodeHistory = (stored: readonly unknown[]): StoredCheckpoint[] => stored.map(decodeCheckpoint);

/** What the stored row says of its layout. */
export interface StoredLayout {
  /** The whole history, newest first (as `shipment_history` reads it). */
  checkpoints: readonly StoredCheckpoint[];
  /** Whether the tail and chunks hold it (false: the 1.0.0 column does, or nothing was stored yet). */
  current: boolean;
  tailLength: number;
  /** Sealed chunk ids, oldest first. */
  chunks: readonly number[];
}

export interface HistoryWrite {
  /** The new tail, encoded, newest first. */
  tail: unknown[];
  /** Chunk ids kept, oldest first. */
  keep: number[];
  /** Chunks to insert, oldest first, each newest first. */
  seal: unknown[][];
  /** Chunk ids to delete (a revised history). */
  drop: number[];
}

/** Seals all but the newest 1–{@link CHUNK} of `open` (newest first) into chunks, oldest first. */
function sealOlder(open: readonly StoredCheckpoint[]): { tail: unknown[]; seal: unknown[][] } {
  const sealed = open.length <= CHUNK ? 0 : Math.floor((open.length - 1) / CHUNK) * CHUNK;
  const tailLength = open.length - sealed;
  const seal: unknown[][] = [];
  for (let end = open.length; end > tailLength; end -= CHUNK)
    seal.push(open.slice(end - CHUNK, end).map(encodeCheckpoint));
  return { tail: open.slice(0, tailLength).map(encodeCheckpoint), seal };
}

/**
 * The writes that store `next` (newest first) over `before`: when the sealed checkpoints are still the oldest of
 * `next`, they stay and only the tail (and any newly sealed chunk) is written; otherwise everything is rewritten.
 */
export function planHistory(before: StoredLayout, next: readonly StoredCheckpoint[]): HistoryWrite {
  if (before.current) {
    const sealedCount = before.checkpoints.length - before.tailLength;
    const keptTail = next.length - sealedCount;
    // The newest checkpoint stays in the tail (`shipment_newest_checkpoint` reads only the tail).
    if (
      (keptTail > 0 || sealedCount === 0) &&
      keptTail >= 0 &&
      Bun.deepEquals(next.slice(keptTail), before.checkpoints.slice(before.tailLength))
    ) {
      const { tail, seal } = sealOlder(next.slice(0, keptTail));
      return { tail, seal, keep: [...before.chunks], drop: [] };
    }
  }
  const { tail, seal } = sealOlder(next);
  return { tail, seal, keep: [], drop: [...before.chunks] };
}

/** Layout level 2 moved the history out of `shipments.checkpoints` (docs/releases.md, "Layout levels"). */
/**
 * Stores the history of shipment `id`: appends the new checkpoints (tail, sealed chunks), rewrites all only when
 * sealed ones were revised; returns the columns to set. `legacy`: also the whole list in `checkpoints`, for 1.0.0.
 */
export async function writeHistory(tx: Tx, before: HistoryRow, record: ShipmentRecord, legacy: boolean, now: Date) {
  const plan = planHistory(
    {
      checkpoints: before.checkpoints,
      current: before.historyAt !== null && before.historyAt.getTime() === before.updatedAt.getTime(),
      tailLength: before.historyTailLength,
      chunks: before.historyChunks ?? [],
    },
    record.checkpoints,
  );
  if (plan.drop.length > 0)
    await tx.delete(shipmentCheckpointChunks).where(inArray(shipmentCheckpointChunks.id, plan.drop));
  const sealed =
    plan.seal.length === 0
      ? []
      : await tx
          .insert(shipmentCheckpointChunks)
          .values(plan.seal.map((checkpoints) => ({ shipmentId: before.id, checkpoints })))
          .returning({ id: shipmentCheckpointChunks.id });
  const chunks = [...plan.keep, ...sealed.map((c) => c.id).sort((a, b) => a - b)];
  return {
    historyTail: plan.tail,
    historyChunks: chunks.length > 0 ? chunks : null,
    historyAt: now,
    checkpoints: legacy ? record.checkpoints : [],
    checkpointCount: record.checkpoints.length,
  };
}
