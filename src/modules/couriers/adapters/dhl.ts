/**
 * DHL Shipment Tracking – Unified: `GET /track/shipments?trackingNumber=<n>`
 * with header `DHL-API-Key: <DHL_API_KEY>` and `Accept: application/json`
 * (DHL developer portal, "Shipment Tracking - Unified"; samples
 * `dhl-unified-track.json`, `dhl-unified-track-error-404.json`).
 *
 * Response: `shipments[]{id, status, events[], origin, destination, details.proofOfDelivery}`,
 * each status/event `{timestamp, statusCode, status, description, remark, location.address.addressLocality}`.
 *
 * Mapping (courier-samples README, DHL): `statusCode` pre-transit→P,
 * transit→T, delivered→D, failure→E, unknown→P, preferred over the `status`
 * text (the sample says pre-transit with status "DELIVERED", karrio maps
 * statusCode first). DHL has no out-for-delivery, return or cancel code, so
 * those are derived from the `status`/`description` text ({@link DHL_TEXT}).
 * A return on its way is exception/`rto_initiated`, back with the shipper is
 * returned (CONTRACT 1: returned = back with the shipper, terminal).
 *
 * Times: ISO 8601; the wall time is kept as written. Event timestamps without
 * an offset (the sample's events have none) are read as UTC — the real
 * offset of such local times is unverified.
 *
 * Errors: 404 problem body (`{title,status,detail,instance}`) → not_found;
 * 401 → auth; 403/429 → rate_limited (gateway quota); 5xx, HTML, truncated
 * or wrong-shaped bodies → backend.
 *
 * Unverified: the daily quota (~250 calls), whether `service=` is needed for
 * full detail on non-Express numbers, the exact wording DHL uses for
 * out-for-delivery and return events (both common phrasings are matched).
 */
import { byKeyword, mapStatus, sub, C, D, E, O, P, R, T, type StatusRule, type StatusTable } from "./status-map.ts";
import { parseIsoLocal } from "./time.ts";
import { CourierError, type CourierAdapter, type RawCheckpoint, type TrackingSnapshot } from "./types.ts";
import { classifyHttpStatus, parseJson } from "./util.ts";

/** `statusCode` → state (README DHL mapping). */
export const DHL_STATUS: StatusTable = {
  "PRE-TRANSIT": sub(P, "info_received"),
  TRANSIT: T,
  DELIVERED: D,
  FAILURE: E,
  UNKNOWN: P,
};

/**
 * Text overrides for what `statusCode` cannot say, tried on `status` +
 * `description` before the code table. Never yields delivered.
 */
export const DHL_TEXT: readonly [RegExp, StatusRule][] = [
  [/\bcancel+ed\b/i, C],
  [/being returned|return(ing)? to (the )?(shipper|sender|origin)|\brto\b/i, sub(E, "rto_initiated")],
  [/returned to (the )?(shipper|sender|origin)|delivered to (the )?(shipper|sender)|return(ed)? shipment delivered/i, sub(R, "rto_delivered")],
  [/out for delivery|with (the )?courier for delivery|out with courier/i, O],
  [/ready for (recipient )?pick ?up|available for pick ?up/i, sub(O, "ready_for_pickup")],
];

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === "string" ? v.trim() : typeof v === "number" ? String(v) : "");

/** Maps one DHL status/event object to a rule. */
export function dhlRule(code: string, status: string, description: string): StatusRule {
  const text = `${status} ${description}`;
  for (const [re, rule] of DHL_TEXT) if (re.test(text)) return rule;
  const rule = mapStatus(DHL_STATUS, [code], text);
  // A failure gets its sub-reason from the text (failed attempt, held, …) when there is one.
  if (rule.state === "exception" && !rule.sub) {
    const k = byKeyword(text);
    if (k?.state === "exception" && k.sub) return k;
  }
  return rule;
}

function toCheckpoint(e: Obj): RawCheckpoint | undefined {
  const when = parseIsoLocal(str(e.timestamp), 0);
  if (!when) return undefined;
  const code = str(e.statusCode);
  const status = str(e.status);
  const description = str(e.description);
  const remark = str(e.remark);
  const rule = dhlRule(code, status, description);
  return {
    state: rule.state,
    subStatus: rule.sub ?? null,
    activity: description || status,
    location: str(obj(obj(e.location).address).addressLocality),
    ...when,
    rawCode: code || null,
    rawStatus: status || null,
    // DHL sends an explicit `remark`; an exception without one keeps its description as the reason.
    remark: remark || (rule.state === "exception" ? description || status || null : null),
  };
}

/** Parses a 200 `shipments` document for `awb`. @throws CourierError not_found | backend */
export function parseDhl(text: string, awb: string): TrackingSnapshot {
  const doc = obj(parseJson(text));
  if (!Array.isArray(doc.shipments)) {
    if (doc.status === 404 || /no result/i.test(str(doc.title))) throw new CourierError("not_found", `dhl: ${str(doc.detail) || "no shipment found"}`);
    throw new CourierError("backend", "dhl: no shipments in the document");
  }
  const shipments = doc.shipments.map(obj);
  const ship = shipments.find((s) => str(s.id) === awb) ?? shipments[0];
  if (!ship) throw new CourierError("not_found", "dhl: no shipment found");
  const events = Array.isArray(ship.events) ? ship.events.map(obj) : [];
  const checkpoints = events.map(toCheckpoint).filter((c): c is RawCheckpoint => Boolean(c));
  const status = obj(ship.status);
  const statusCp = toCheckpoint(status);
  const statusRule = dhlRule(str(status.statusCode), str(status.status), str(status.description));
  const newest = checkpoints.reduce<RawCheckpoint | undefined>((a, c) => (!a || c.at > a.at ? c : a), undefined);
  const pod = obj(obj(ship.details).proofOfDelivery);
  const podUrl = str(pod.documentUrl);
  return {
    checkpoints,
    summary: Object.keys(status).length
      ? { state: statusRule.state, subStatus: statusRule.sub ?? null, rawCode: str(status.statusCode) || null, rawStatus: str(status.status) || null, at: statusCp?.at ?? null }
      : undefined,
    originCity: str(obj(obj(ship.origin).address).addressLocality) || null,
    destinationCity: str(obj(obj(ship.destination).address).addressLocality) || null,
    podUrl: /^https?:\/\//i.test(podUrl) ? podUrl : null,
    remark: (newest ?? statusCp)?.remark ?? null,
  };
}

export const dhlAdapter: CourierAdapter = {
  id: "dhl",
  defaultBaseUrl: "https://api-eu.dhl.com",
  envPrefix: "DHL",
  credentialVars: ["DHL_API_KEY"],
  async track(awb, ctx) {
    const res = await ctx.http.request({
      path: "/track/shipments",
      query: { trackingNumber: awb },
      headers: { "DHL-API-Key": ctx.credentials.DHL_API_KEY ?? "", accept: "application/json" },
      signal: ctx.signal,
    });
    if (res.status === 403) throw new CourierError("rate_limited", "dhl: refused (403, quota)", 403);
    if (res.status === 404) {
      // The documented not-found answer is a problem body; a 404 without one is a wrong path (misconfigured base URL).
      const body = safeJson(res.text);
      if (body && (body.status === 404 || "title" in body)) throw new CourierError("not_found", `dhl: ${str(body.detail) || "no shipment found"}`, 404);
      throw new CourierError("backend", "dhl: 404 without a problem body", 404);
    }
    classifyHttpStatus("dhl", res.status);
    return parseDhl(res.text, awb);
  },
};

function safeJson(text: string): Obj | undefined {
  try {
    const v = JSON.parse(text);
    return typeof v === "object" && v !== null ? (v as Obj) : undefined;
  } catch {
    return undefined;
  }
}
