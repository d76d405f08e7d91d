/**
 * Delhivery: `GET /api/v1/packages/json/?waybill=<awb>` with header
 * `Authorization: Token <DELHIVERY_TOKEN>` (Delhivery B2C API, "Track
 * Shipment"; samples `delhivery-packages-json-*.json`). Times are naive IST.
 *
 * Mapping (courier-samples README, Delhivery): `StatusType` + `Scan`, refined
 * by the NSL `StatusCode`. NDR codes (EOD-11, EOD-74, …) under UD are failed
 * delivery attempts → exception. RT (return to origin in progress) →
 * exception/`rto_in_transit`, and DL+RTO (back with the shipper) → returned:
 * CONTRACT 1 defines `returned` as "back with the shipper" and makes it
 * terminal, so an RTO still on its way keeps being followed until it arrives.
 *
 * Errors: a 200 with `{"Error": "No such waybill…", "Success": false}` or an
 * empty `ShipmentData` → not found; 401 → auth; 403 is Delhivery's WAF rate
 * limit (750 req / 5 min / IP) → rate_limited; 429 → rate_limited; 5xx or a
 * body that is not the documented JSON → backend.
 */
import { mapStatus, sub, C, D, E, O, P, R, T, type StatusTable } from "./status-map.ts";
import { parseNaive } from "./time.ts";
import { CourierError, type CourierAdapter, type RawCheckpoint, type TrackingSnapshot } from "./types.ts";
import { classifyHttpStatus, parseJson } from "./util.ts";

const NDR = ["EOD-11", "EOD-74", "EOD-15", "EOD-104", "EOD-43", "EOD-86", "EOD-69", "EOD-6", "ST-108"];

/** Keys: `TYPE:CODE`, `TYPE:SCAN` (upper-cased), `TYPE`. */
export const DELHIVERY_STATUS: StatusTable = {
  ...Object.fromEntries(NDR.map((c) => [`UD:${c}`, sub(E, "delivery_attempt_failed")])),
  "UD:X-PPOM": sub(T, "picked_up"),
  "UD:MANIFESTED": sub(P, "info_received"),
  "UD:NOT PICKED": P,
  "UD:IN TRANSIT": T,
  "UD:PENDING": T,
  "UD:DISPATCHED": O,
  "DL:DELIVERED": D,
  "DL:DTO": D,
  "DL:RTO": sub(R, "rto_delivered"),
  "RT:IN TRANSIT": sub(E, "rto_in_transit"),
  "RT:PENDING": sub(E, "rto_in_transit"),
  "RT:DISPATCHED": sub(E, "rto_in_transit"),
  "RT:DELIVERED": sub(R, "rto_delivered"),
  RT: sub(E, "rto_in_transit"),
  "PP:OPEN": P,
  "PP:SCHEDULED": P,
  "PP:DISPATCHED": P,
  PU: T,
  CN: C,
  DL: D,
};

interface Scan {
  Scan?: unknown;
  ScanType?: unknown;
  StatusCode?: unknown;
  ScanDateTime?: unknown;
  StatusDateTime?: unknown;
  ScannedLocation?: unknown;
  Instructions?: unknown;
}

const str = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");

/** `Amritsar_VerkaBypss_I (Punjab)` → `Amritsar, Punjab`; plain names pass through. */
export function delhiveryPlace(raw: string): string {
  const m = /^([^_(]+)(?:_[^(]*)?(?:\(([^)]+)\))?\s*$/.exec(raw.trim());
  if (!m) return raw.trim();
  const city = m[1]!.trim();
  return m[2] ? `${city}, ${m[2].trim()}` : city;
}

function toCheckpoint(s: Scan): RawCheckpoint | undefined {
  const type = str(s.ScanType).toUpperCase();
  const scan = str(s.Scan);
  const code = str(s.StatusCode);
  const instructions = str(s.Instructions);
  const when = parseNaive(str(s.ScanDateTime) || str(s.StatusDateTime));
  if (!when) return undefined;
  const rule = mapStatus(DELHIVERY_STATUS, [`${type}:${code}`, `${type}:${scan.toUpperCase()}`, type], `${scan} ${instructions}`);
  return {
    state: rule.state,
    subStatus: rule.sub ?? null,
    activity: instructions || scan,
    location: delhiveryPlace(str(s.ScannedLocation)),
    ...when,
    rawCode: code || type || null,
    rawStatus: scan || null,
    remark: rule.state === "exception" ? instructions || null : null,
  };
}

/** Parses a packages/json document for `awb`. @throws CourierError not_found | backend */
export function parseDelhivery(text: string, awb: string): TrackingSnapshot {
  const doc = parseJson(text) as { ShipmentData?: { Shipment?: Record<string, unknown> }[]; Error?: unknown; Success?: unknown };
  if (typeof doc !== "object" || doc === null) throw new CourierError("backend", "delhivery: unexpected document");
  if (doc.Error !== undefined || doc.Success === false) throw new CourierError("not_found", `delhivery: ${str(doc.Error) || "no such waybill"}`);
  if (!Array.isArray(doc.ShipmentData)) throw new CourierError("backend", "delhivery: no ShipmentData");
  const entry = doc.ShipmentData.find((d) => str(d?.Shipment?.AWB) === awb) ?? (doc.ShipmentData.length === 1 ? doc.ShipmentData[0] : undefined);
  const ship = entry?.Shipment;
  if (!ship || typeof ship !== "object") throw new CourierError("not_found", "delhivery: waybill not in response");
  const scans = Array.isArray(ship.Scans) ? (ship.Scans as { ScanDetail?: Scan }[]) : [];
  const checkpoints = scans.map((x) => (x && typeof x === "object" && x.ScanDetail ? toCheckpoint(x.ScanDetail) : undefined)).filter((c): c is RawCheckpoint => Boolean(c));
  const status = (typeof ship.Status === "object" && ship.Status !== null ? ship.Status : {}) as Scan & { Status?: unknown; StatusType?: unknown };
  const statusCp = toCheckpoint({ ...status, Scan: status.Status, ScanType: status.StatusType, ScannedLocation: (status as Record<string, unknown>).StatusLocation });
  const consignee = (typeof ship.Consignee === "object" && ship.Consignee ? ship.Consignee : {}) as Record<string, unknown>;
  const newest = checkpoints.reduce<RawCheckpoint | undefined>((a, c) => (!a || c.at >= a.at ? c : a), undefined);
  return {
    checkpoints,
    summary: statusCp ? { state: statusCp.state, subStatus: statusCp.subStatus, rawCode: statusCp.rawCode, rawStatus: statusCp.rawStatus, at: statusCp.at } : undefined,
    originCity: str(ship.Origin) ? delhiveryPlace(str(ship.Origin)).split(",")[0]! : null,
    destinationCity: str(ship.Destination) || str(consignee.City) || null,
    podUrl: null,
    remark: newest?.remark ?? null,
  };
}

export const delhiveryAdapter: CourierAdapter = {
  id: "delhivery",
  defaultBaseUrl: "https://track.delhivery.com",
  envPrefix: "DELHIVERY",
  credentialVars: ["DELHIVERY_TOKEN"],
  async track(awb, ctx) {
    const res = await ctx.http.request({
      path: "/api/v1/packages/json/",
      query: { waybill: awb, ref_ids: "" },
      headers: { authorization: `Token ${ctx.credentials.DELHIVERY_TOKEN}`, accept: "application/json" },
      signal: ctx.signal,
    });
    // Delhivery's WAF answers 403 when the 750 req / 5 min budget is spent.
    if (res.status === 403) throw new CourierError("rate_limited", "delhivery: throttled (WAF 403)", 403);
    classifyHttpStatus("delhivery", res.status);
    return parseDelhivery(res.text, awb);
  },
};
