/**
 * The one shape every courier backend adapter has (STYLE: OpenStatus-style
 * small adapters behind one interface; issue 3 item 1).
 *
 * An adapter builds the request exactly as the courier documents it (URL,
 * auth, body), parses the courier's own JSON or XML, maps each event to the
 * normalised state with a per-courier data table (see `status-map.ts`), and
 * classifies failures as {@link CourierError} with a `retryable` flag. It
 * knows nothing of the simulator: in sandbox mode its base URL simply points
 * at the simulator's loopback port.
 */
import type { ShipmentState, SubStatus } from "../../tracking/states.ts";
import type { Courier } from "../catalogue.ts";
import type { CourierHttp } from "../http.ts";

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

/** What a successful lookup returns. */
export interface TrackingSnapshot {
  /** Checkpoints in any order; the tracking service sorts and de-duplicates. */
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
}

/** Failure classes (issue 3 item 1). */
export type CourierFailure = "not_found" | "invalid_number" | "auth" | "rate_limited" | "timeout" | "backend";

const RETRYABLE: Record<CourierFailure, boolean> = {
  not_found: false,
  invalid_number: false,
  auth: false,
  rate_limited: true,
  timeout: true,
  backend: true,
};

/**
 * A classified courier failure. Callers decide from `kind`/`retryable`, never
 * by parsing `message` (STYLE habit 3). `message` is for logs and never holds
 * credentials.
 */
export class CourierError extends Error {
  readonly retryable: boolean;
  constructor(readonly kind: CourierFailure, message: string, readonly httpStatus?: number) {
    super(message);
    this.name = "CourierError";
    this.retryable = RETRYABLE[kind];
  }
}

/** What an adapter gets per lookup. */
export interface AdapterContext {
  courier: Courier;
  /** HTTP client bound to this courier's pool, base URL and timeout. */
  http: CourierHttp;
  /** This courier's credentials by variable name (`DHL_API_KEY`, …). In sandbox mode: sandbox values. */
  credentials: Readonly<Record<string, string>>;
  /** Aborts when the request's budget is spent. */
  signal: AbortSignal;
  /** Milliseconds since the epoch (injectable clock). */
  now(): number;
  /** Sleeps `ms`, resolving early with an abort error when `signal` fires (async polling). */
  sleep(ms: number): Promise<void>;
}

export interface CourierAdapter {
  /** Adapter id as used in the catalogue. */
  readonly id: string;
  /** The courier's documented production base URL (`<COURIER>_BASE_URL` overrides it). */
  readonly defaultBaseUrl: string;
  /** Environment prefix: `DHL` → `DHL_BASE_URL`, `DHL_API_KEY`. */
  readonly envPrefix: string;
  /** Credential variables (full names) that must all be set for live use. */
  readonly credentialVars: readonly string[];
  /** True for asynchronous backends (register, then poll): given the 30 s budget instead of the sync timeout. */
  readonly async?: boolean;
  /**
   * Looks up one tracking number (already normalised and format-checked).
   * @throws CourierError for every failure the courier or the network causes.
   */
  track(trackingNumber: string, ctx: AdapterContext): Promise<TrackingSnapshot>;
}
