/** UPS Track API v1 (developer.ups.com). Endpoint, mapping, times, EDD, errors: README.md in this folder. */
import { accountKey, readTokenResponse, TokenCache } from "../../adapters/token-cache.ts";
import {
  arr,
  checkWire,
  checkpoint,
  checkpointsOf,
  estimateDate,
  newestOf,
  obj,
  parseJson,
  str,
  summary,
  throwForStatus,
  tryJson,
} from "../../adapters/kit.ts";
import {
  mapStatus,
  sub,
  withExceptionReason,
  C,
  D,
  E,
  O,
  P,
  R,
  T,
  type StatusRule,
  type StatusTable,
} from "../../adapters/status-map.ts";
import { fromParts, type LocalTime } from "../../adapters/time.ts";
import { CourierError, type CourierAdapter } from "../../adapters/types.ts";
import type { RawCheckpoint, TrackingSnapshot } from "../../../../domain/checkpoint.ts";
import { UpsTrackResponse, type UpsActivity, type UpsAddress, type UpsPackage, type UpsStatus } from "./wire.ts";

const codes = (list: string[], rule: StatusRule) => Object.fromEntries(list.map((c) => [c, rule]));

/** 3-digit activity `statusCode` → state (`fixtures/SOURCE.md`, "Mapping"). */
const UPS_STATUS_CODE: StatusTable = {
  "003": sub(P, "info_received"),
  ...codes(["005", "010", "025", "039", "047"], T),
  ...codes(["006", "021", "037", "072", "089", "091"], O),
  ...codes(["011", "026"], D),
  ...codes(["013", "029", "046", "048", "060", "061", "062", "064", "069"], E),
  ...codes(["033", "034", "035", "036", "067"], sub(E, "rto_in_transit")),
  ...codes(["007", "043"], C),
  ...codes(["017", "040"], sub(O, "ready_for_pickup")),
};

/** Activity `status.type` → state (`fixtures/SOURCE.md`, "Mapping"). */
const UPS_TYPE: StatusTable = {
  M: sub(P, "info_received"),
  MV: C,
  I: T,
  D: D,
  X: E,
  P: sub(T, "picked_up"),
  U: T,
  NA: P,
};

const RETURNED_TEXT = /return(ed)? to (the )?(shipper|sender)|delivered to (the )?(shipper|sender)/i;

/** Maps one UPS status object `{type, code, description, statusCode}`. */
export function upsRule(status: UpsStatus): StatusRule {
  const text = str(status.description);
  const rule = UPS_STATUS_CODE[str(status.statusCode)] ?? mapStatus(UPS_TYPE, [str(status.type)], text);
  if (rule.state === "delivered" && RETURNED_TEXT.test(text)) return sub(R, "rto_delivered");
  return withExceptionReason(rule, text);
}

function place(a: UpsAddress): string {
  const city = str(a.city);
  const st = str(a.stateProvince);
  return city && st ? `${city}, ${st}` : city || str(a.countryCode) || str(a.country);
}

/** UPS `YYYYMMDD` + `HHMMSS` local time (never DTDC's DDMMYYYY, so not `parseNaive`). */
function parseUpsTime(date: string, time: string): LocalTime | undefined {
  const d = /^(\d{4})(\d{2})(\d{2})$/.exec(date);
  const t = /^(\d{2})(\d{2})(\d{2})?$/.exec(time) ?? (time ? null : ["", "0", "0", "0"]);
  if (!d || !t) return undefined;
  return fromParts(Number(d[1]), Number(d[2]), Number(d[3]), Number(t[1]), Number(t[2]), +(t[3] ?? 0), 0);
}

function toCheckpoint(a: UpsActivity): RawCheckpoint | undefined {
  const when = parseUpsTime(str(a.date), str(a.time));
  if (!when) return undefined;
  const status = a.status ?? {};
  const rule = upsRule(status);
  const description = str(status.description);
  return checkpoint(rule, when, {
    activity: description,
    location: place(a.location?.address ?? {}),
    rawCode: str(status.statusCode) || str(status.code) || str(status.type) || null,
    rawStatus: description || null,
    remark: rule.state === "exception" ? description || null : null,
  });
}

/** Throws the classified error for a UPS error/warning code. */
function throwForCode(code: string, message: string, status?: number): never {
  if (code === "TW0001") throw new CourierError("not_found", `ups: ${code} ${message}`.trim(), status);
  if (code === "TV1002") throw new CourierError("invalid_number", `ups: ${code} ${message}`.trim(), status);
  if (/^250\d{3}$/.test(code) || /^10401$/.test(code))
    throw new CourierError("auth", `ups: ${code} ${message}`.trim(), status);
  throw new CourierError("backend", `ups: ${code} ${message}`.trim(), status);
}

const IMAGE = [
  [/^\/9j\//, "image/jpeg"],
  [/^iVBORw0KGgo/, "image/png"],
  [/^R0lGOD/, "image/gif"],
] as const;

/** `data:` URL for a base64 delivery photo, or null (placeholder, unknown format, too big). */
export function photoDataUrl(b64: string): string | null {
  const s = b64.replace(/\s+/g, "");
  if (!s || s.length > 256 * 1024 || !/^[A-Za-z0-9+/]+={0,2}$/.test(s)) return null;
  const type = IMAGE.find(([re]) => re.test(s))?.[1];
  return type ? `data:${type};base64,${s}` : null;
}

/** The package's EDD, `YYYY-MM-DD`: the rescheduled date, else the scheduled one; null without either. */
export function upsEstimate(pkg: UpsPackage): string | null {
  const of = (type: string) => estimateDate(pkg.deliveryDate?.find((d) => str(d.type).toUpperCase() === type)?.date);
  return of("RDD") ?? of("SDD");
}

/** Parses a Track API document (any status) for `awb`. @throws CourierError not_found | invalid_number | auth | backend */
export function parseUps(text: string, awb: string): TrackingSnapshot {
  const raw = obj(parseJson(text));
  const errors = arr(obj(raw.response).errors);
  const [error] = errors;
  if (error) throwForCode(str(error.code), str(error.message));
  const shipments = checkWire("ups", UpsTrackResponse, raw).trackResponse?.shipment;
  if (!shipments) throw new CourierError("backend", "ups: no trackResponse.shipment");
  const ship = shipments.find((s) => str(s.inquiryNumber) === awb) ?? shipments[0];
  const warnings = ship?.warnings ?? [];
  const packages = ship?.package ?? [];
  const [first] = packages;
  if (!first) {
    const [warning] = warnings;
    if (warning) throwForCode(str(warning.code), str(warning.message));
    throw new CourierError("not_found", "ups: no package in the answer");
  }
  const pkg = packages.find((p) => str(p.trackingNumber) === awb) ?? first;
  const checkpoints = checkpointsOf(pkg.activity ?? [], toCheckpoint);
  const newest = newestOf(checkpoints, "first-listed");
  const current = pkg.currentStatus ?? {};
  const city = (t: string) => str(pkg.packageAddress?.find((a) => str(a.type).includes(t))?.address?.city) || null;
  return {
    checkpoints,
    summary: Object.keys(current).length
      ? summary(upsRule(current), {
          rawCode: str(current.statusCode) || str(current.code) || null,
          rawStatus: str(current.description) || null,
          at: newest?.at ?? null,
        })
      : undefined,
    originCity: city("ORIGIN"),
    destinationCity: city("DESTINATION"),
    podUrl: photoDataUrl(str(pkg.deliveryInformation?.deliveryPhoto?.photo)),
    remark: newest?.remark ?? null,
    estimatedDelivery: upsEstimate(pkg),
  };
}

const tokens = new TokenCache(async (ctx) => {
  const basic = Buffer.from(
    `${ctx.credentials.UPS_CLIENT_ID ?? ""}:${ctx.credentials.UPS_CLIENT_SECRET ?? ""}`,
  ).toString("base64");
  const res = await ctx.http.request({
    method: "POST",
    path: "/security/v1/oauth/token",
    headers: {
      authorization: `Basic ${basic}`,
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
    },
    body: "grant_type=client_credentials",
  });
  return readTokenResponse("ups", res.status, res.text);
});

/** Value of the `transactionSrc` header (UPS: identifies the calling application). */
export const UPS_TRANSACTION_SRC = "courier-tracking-api";

export const upsAdapter: CourierAdapter = {
  id: "ups",
  defaultBaseUrl: "https://onlinetools.ups.com",
  envPrefix: "UPS",
  credentialVars: ["UPS_CLIENT_ID", "UPS_CLIENT_SECRET"],
  async track(awb, ctx) {
    const send = (token: string) =>
      ctx.http.request({
        path: `/api/track/v1/details/${encodeURIComponent(awb)}`,
        query: { locale: "en_US", returnSignature: "false" },
        headers: {
          authorization: `Bearer ${token}`,
          transId: crypto.randomUUID().replace(/-/g, ""),
          transactionSrc: UPS_TRANSACTION_SRC,
          accept: "application/json",
        },
        signal: ctx.signal,
      });
    const res = await tokens.send(ctx, accountKey(ctx, "UPS_CLIENT_ID"), "ups", send);
    if (res.status >= 400 && res.status < 500 && res.status !== 401 && res.status !== 403 && res.status !== 429) {
      // 400/404 carry `{response:{errors:[…]}}` (TV1002 invalid, TW0001 not found).
      const code = str(arr(obj(obj(tryJson(res.text)).response).errors)[0]?.code);
      if (code) return parseUps(res.text, awb);
    }
    throwForStatus("ups", res.status, { notFoundOn404: false });
    return parseUps(res.text, awb);
  },
};
