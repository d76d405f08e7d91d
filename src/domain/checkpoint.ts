/**
 * The checkpoint and snapshot shapes every layer shares: a courier adapter produces a {@link TrackingSnapshot}, the
 * shipments core merges its checkpoints into the stored history ({@link StoredCheckpoint}, the `shipments.checkpoints`
 * column), and the tracking view and webhook payload render them (spec: Resources, checkpoint fields).
 * Part of `src/domain/`, the shared vocabulary: it imports nothing from the modules.
 */
import type { ShipmentState, SubStatus } from "./states.ts";

/** One courier event, normalised but with the raw code and text kept. */
export interface RawCheckpoint {
  state: ShipmentState;
  subStatus: SubStatus | null;
  /** Courier's description of the event, as sent. */
  activity: string;
  /** City or route ("Mumbai", "Delhi to Mumbai"); may be "". */
  location: string;
  /** Courier-local wall time as reported: `YYYY-MM-DD` and `HH:MM` (24 h). */
  localDate: string;
  localTime: string;
  /** The same instant in UTC, ISO 8601, for ordering (Indian couriers: local time read as Asia/Kolkata). */
  at: string;
  rawCode: string | null;
  rawStatus: string | null;
  /** Courier remark for this event (e.g. reason of a failed attempt), or null. */
  remark: string | null;
}

/**
 * A checkpoint as stored in `shipments.checkpoints`: exactly the adapter's normalised checkpoint, the raw courier
 * code and text kept (so a changed status table can be re-applied to stored history).
 */
export type StoredCheckpoint = RawCheckpoint;

/** What a successful courier lookup returns. */
export interface TrackingSnapshot {
  /** Checkpoints in any order; the shipments core sorts and de-duplicates. */
  checkpoints: RawCheckpoint[];
  /**
   * Shipment-level state the courier reports, used when there are no
   * checkpoints (e.g. manifested, no scans) or when newer than every checkpoint.
   */
  summary?: { state: ShipmentState; subStatus: SubStatus | null; rawCode?: string | null; rawStatus?: string | null; at?: string | null };
  originCity: string | null;
  destinationCity: string | null;
  /** Proof-of-delivery image/document URL when the courier gives one. */
  podUrl: string | null;
  /** Courier's remark for the newest event, or null (AdditionalInfo). */
  remark: string | null;
  /** Return (RTO) waybill the courier reports, when it gives one (DTDC, Ecom Express). */
  rtoNumber?: string | null;
  /**
   * The courier's own estimated delivery date (EDD) in its latest answer: a
   * calendar date in the courier's zone, `YYYY-MM-DD`; null or absent when the
   * answer carries none (docs/shipments.md, "Estimated delivery").
   */
  estimatedDelivery?: string | null;
}
