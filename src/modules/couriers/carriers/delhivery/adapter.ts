/** Delhivery B2C "Track Shipment" API; details: README.md in this folder. */
import { parsePincode } from "../../../../domain/places.ts";
import {
  checkWire,
  checkpoint,
  checkpointsOf,
  estimateDate,
  newestOf,
  parseJson,
  str,
  summaryFromCheckpoint,
  throwForStatus,
} from "../../adapters/kit.ts";
import { mapStatus, sub, C, D, E, O, P, R, T, type StatusTable } from "../../adapters/status-map.ts";
import { IST_ZONE, parseNaive } from "../../adapters/time.ts";
import { CourierError, type CourierAdapter } from "../../adapters/types.ts";
import type { RawCheckpoint, TrackingSnapshot } from "../../../../domain/checkpoint.ts";
import { DELHIVERY_NDR_CODES } from "./reasons.ts";
import { DelhiveryResponse, type DelhiveryScan } from "./wire.ts";
import { delhiveryActions } from "./actions.ts";

/** Failed or impossible deliveries under UD: the NSL codes of reasons.ts, and ST-108 (fixtures/SOURCE.md). */
const NDR = [...Object.keys(DELHIVERY_NDR_CODES), "ST-108"];

/** Keys: `TYPE:CODE`, `TYPE:SCAN` (upper-cased), `TYPE`. Damaged, lost and held codes: README.md, "Failed attempts". */
const DELHIVERY_STATUS: StatusTable = {
  ...Object.fromEntries(NDR.map((c) => [`UD:${c}`, sub(E, "delivery_attempt_failed")])),
  "UD:RT-104": sub(E, "damaged"),
  "UD:DLYRPC-416": sub(E, "held"),
  LT: sub(E, "lost"),
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

/** `Amritsar_VerkaBypss_I (Punjab)` → `Amritsar, Punjab`; plain names pass through. */
function delhiveryPlace(raw: string): string {
  const m = /^([^_(]+)(?:_[^(]*)?(?:\(([^)]+)\))?\s*$/.exec(raw.trim());
  if (!m) return raw.trim();
  const city = (m[1] ?? raw).trim();
  return m[2] ? `${city}, ${m[2].trim()}` : city;
}

function toCheckpoint(s: DelhiveryScan): RawCheckpoint | undefined {
  const type = str(s.ScanType).toUpperCase();
  const [scan, code, instructions] = [str(s.Scan), str(s.StatusCode), str(s.Instructions)];
  const when = parseNaive(str(s.ScanDateTime) || str(s.StatusDateTime));
  if (!when) return undefined;
  const rule = mapStatus(
    DELHIVERY_STATUS,
    [`${type}:${code}`, `${type}:${scan.toUpperCase()}`, type],
    `${scan} ${instructions}`,
  );
  return checkpoint(rule, when, {
    activity: instructions || scan,
    location: delhiveryPlace(str(s.ScannedLocation)),
    rawCode: code || type || null,
    rawStatus: scan || null,
    remark: rule.state === "exception" ? instructions || null : null,
  });
}

/** Parses a packages/json document for `awb`. @throws CourierError not_found | backend */
export function parseDelhivery(text: string, awb: string): TrackingSnapshot {
  const raw = parseJson(text);
  if (typeof raw !== "object" || raw === null) throw new CourierError("backend", "delhivery: unexpected document");
  const err = raw as { Error?: unknown; Success?: unknown };
  if (err.Error !== undefined || err.Success === false)
    throw new CourierError("not_found", `delhivery: ${str(err.Error) || "no such waybill"}`);
  const doc = checkWire("delhivery", DelhiveryResponse, raw);
  if (!doc.ShipmentData) throw new CourierError("backend", "delhivery: no ShipmentData");
  const entry =
    doc.ShipmentData.find((d) => str(d.Shipment?.AWB) === awb) ??
    (doc.ShipmentData.length === 1 ? doc.ShipmentData[0] : undefined);
  const ship = entry?.Shipment;
  if (!ship) throw new CourierError("not_found", "delhivery: waybill not in response");
  const checkpoints = checkpointsOf(ship.Scans ?? [], (x) => (x.ScanDetail ? toCheckpoint(x.ScanDetail) : undefined));
  const status = ship.Status ?? {};
  const statusCp = toCheckpoint({
    ...status,
    Scan: status.Status,
    ScanType: status.StatusType,
    ScannedLocation: status.StatusLocation,
  });
  return {
    checkpoints,
    summary: statusCp ? summaryFromCheckpoint(statusCp) : undefined,
    originCity: str(ship.Origin) ? (delhiveryPlace(str(ship.Origin)).split(",")[0] ?? null) : null,
    destinationCity: str(ship.Destination) || str(ship.Consignee?.City) || null,
    destinationPincode: parsePincode(str(ship.Consignee?.PinCode)),
    podUrl: null,
    remark: newestOf(checkpoints, "last-listed")?.remark ?? null,
    estimatedDelivery:
      estimateDate(ship.ExpectedDeliveryDate, IST_ZONE) ?? estimateDate(ship.PromisedDeliveryDate, IST_ZONE),
  };
}

export const delhiveryAdapter: CourierAdapter = {
  id: "delhivery",
  defaultBaseUrl: "https://track.delhivery.com",
  envPrefix: "DELHIVERY",
  credentialVars: ["DELHIVERY_TOKEN"],
  actions: delhiveryActions,
  async track(awb, ctx) {
    const res = await ctx.http.request({
      path: "/api/v1/packages/json/",
      query: { waybill: awb, ref_ids: "" },
      headers: { authorization: `Token ${ctx.credentials.DELHIVERY_TOKEN}`, accept: "application/json" },
      signal: ctx.signal,
    });
    // Delhivery's WAF answers 403 when the 750 req / 5 min budget is spent: rate_limited, like 429.
    throwForStatus("delhivery", res.status);
    return parseDelhivery(res.text, awb);
  },
};
