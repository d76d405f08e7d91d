/** The checkpoint and snapshot shapes every layer shares (spec: Resources, checkpoint fields). */
import type { ShipmentState, SubStatus } from "./states.ts";

export interface RawCheckpoint {
  state: ShipmentState;
  subStatus: SubStatus | null;
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
  remark: string | null;
}

/** A checkpoint as stored in `shipments.checkpoints`, raw code and text kept so a changed table can be re-applied. */
export type StoredCheckpoint = RawCheckpoint;

export interface TrackingSnapshot {
  checkpoints: RawCheckpoint[];
  /** The courier's shipment-level state, used without checkpoints or when newer than all of them. */
  summary?: {
    state: ShipmentState;
    subStatus: SubStatus | null;
    rawCode?: string | null;
    rawStatus?: string | null;
    at?: string | null;
  };
  originCity: string | null;
  destinationCity: string | null;
  /** Indian PINs when the courier gives them (statistics keys only: docs/predictions.md, "Pincode lanes"). */
  originPincode?: string | null;
  destinationPincode?: string | null;
  podUrl: string | null;
  remark: string | null;
  /** Return (RTO) waybill the courier reports, when it gives one (DTDC, Ecom Express). */
  rtoNumber?: string | null;
  /** The courier's EDD in its latest answer, `YYYY-MM-DD` in its zone (docs/shipments.md#estimated-delivery). */
  estimatedDelivery?: string | null;
}
