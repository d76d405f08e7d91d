/** The one shape every courier backend adapter has; failures are classified {@link CourierError}s. */
import type { TrackingSnapshot } from "../../../domain/checkpoint.ts";
import type { Courier } from "./courier.ts";
import type { ActionName, ActionRules, Consignee } from "../../../domain/actions.ts";

/** Failure classes; `retryable` says whether trying again later can help (docs/spec-map.md, "Decisions"). */
export type CourierFailure = "not_found" | "invalid_number" | "auth" | "rate_limited" | "timeout" | "backend";

const RETRYABLE: Record<CourierFailure, boolean> = {
  not_found: false,
  invalid_number: false,
  auth: false,
  rate_limited: true,
  timeout: true,
  backend: true,
};

/** A classified courier failure; callers decide from `kind`/`retryable`. `message` never holds credentials. */
export class CourierError extends Error {
  readonly retryable: boolean;
  constructor(
    readonly kind: CourierFailure,
    message: string,
    readonly httpStatus?: number,
  ) {
    super(message);
    this.name = "CourierError";
    this.retryable = RETRYABLE[kind];
  }
}

/** One request to a courier backend, relative to its base URL. */
interface CourierRequest {
  method?: "GET" | "POST";
  /** Path (and query) appended to the base URL, e.g. `/api/v1/packages/json/?waybill=…`. */
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** A courier's answer, the body read whole (bounded by `MAX_COURIER_BODY` in ../http.ts). */
export interface CourierResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** The HTTP client an adapter gets: one per courier (own pool and timeout), implemented by ../http.ts. */
export interface CourierHttp {
  readonly baseUrl: string;
  /** @throws CourierError (timeout | backend) on network failure; any HTTP status is returned, not thrown. */
  request(req: CourierRequest): Promise<CourierResponse>;
  close(): Promise<void>;
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
  /** Looks up one normalised, format-checked number. @throws CourierError for every courier or network failure */
  track(trackingNumber: string, ctx: AdapterContext): Promise<TrackingSnapshot>;
  /** The courier's documented NDR action API (docs/ndr-actions.md); absent: the courier documents none. */
  readonly actions?: CourierActions;
}

/** One action as sent to the courier; consignee values are personal data: never logged. */
export interface ActionRequest {
  action: ActionName;
  trackingNumber: string;
  /** `YYYY-MM-DD`, `defer_delivery` only. */
  deferredDate?: string;
  consignee?: Consignee;
  note?: string;
}

/** The courier's answer: `requested` while an asynchronous courier has not decided (poll `reference`). */
export interface ActionAnswer {
  status: "requested" | "accepted" | "rejected";
  /** The courier's id for the request (Delhivery's UPL id), null when it gives none. */
  reference: string | null;
  /** The courier's words for a rejection; never consignee data. */
  reason?: string;
}

export interface CourierActions {
  /** Which actions, and when the courier accepts them (its docs). */
  rules: ActionRules;
  /** Sends one action. @throws CourierError (retryable kinds are retried from the outbox) */
  submit(req: ActionRequest, ctx: AdapterContext): Promise<ActionAnswer>;
  /** Reads the decision on an asynchronous request. @throws CourierError */
  poll?(reference: string, req: ActionRequest, ctx: AdapterContext): Promise<ActionAnswer>;
}
