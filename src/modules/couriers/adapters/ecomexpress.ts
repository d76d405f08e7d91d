/**
 * Ecom Express tracking: `POST <base>/track_me/api/mawbd/` with form fields
 * `awb`, `username` (ECOMEXPRESS_USERNAME) and `password`
 * (ECOMEXPRESS_PASSWORD), `application/x-www-form-urlencoded`. Default base
 * URL `https://plapi.ecomexpress.in` (courier-samples README "Ecom Express").
 *
 * NO REAL SAMPLE EXISTS: this adapter is built from the documented field list
 * only (README; field order from Elderly-Care-Platform/by_local
 * byProductEcomConfig.js and public parser code). The response is XML:
 * `<ecomexpress-objects version><object pk model="awb"><field name="…">` with
 * awb_number, orderid, origin, destination, status, reason_code,
 * reason_code_number, reason_code_description, receiver, expected_date,
 * last_update_date, delivery_date, ref_awb (the RTO AWB), rts_shipment… and
 * `<field name="scans">` holding nested `<object>`s (status, reason_code,
 * reason_code_number, location_city, updated_on "05 Nov, 2026, 10:20" — naive IST).
 *
 * Mapping: {@link ECOM_CODE} by `reason_code_number` (only 999 = Delivered is
 * documented, and **unverified**), then {@link ECOM_TEXT} by status text, then
 * the shared keywords, then in transit (never delivered by default). Both
 * tables are plain data: correct them when a real payload is available.
 * `ref_awb` non-empty is reported as `rtoNumber`; the README maps it to R,
 * but as in the Delhivery reference a return still on its way is
 * exception/`rto_in_transit` until the text says it is back with the shipper
 * (CONTRACT 1: `returned` is terminal, "back with the shipper").
 *
 * Errors: no `object` for the AWB (an empty `ecomexpress-objects`) → not_found;
 * HTTP 401 or an "unauthorised / invalid username or password" text → auth;
 * 403/429 → rate_limited; 5xx, HTML, truncated XML, DOCTYPE/ENTITY → backend.
 * Unverified: the not-found and auth answers, all codes except 999, and any POD
 * (none in the field list).
 */
import { byKeyword, sub, C, D, E, O, P, R, T, type StatusRule, type StatusTable } from "./status-map.ts";
import { parseNaive } from "./time.ts";
import { CourierError, type CourierAdapter, type RawCheckpoint, type TrackingSnapshot } from "./types.ts";
import { asArray, classifyHttpStatus, parseXml } from "./util.ts";

/** `reason_code_number` → state. Only 999 is documented (unverified); add codes here as they are confirmed. */
export const ECOM_CODE: StatusTable = {
  "999": D,
};

/** Status text (upper-cased, exact) → state. Wording from public parser code; unverified. */
export const ECOM_TEXT: StatusTable = {
  "SOFT DATA UPLOADED": sub(P, "info_received"),
  "SHIPMENT PICKED UP": sub(T, "picked_up"),
  "PICKUP DONE": sub(T, "picked_up"),
  "SHIPMENT IN-TRANSIT": T,
  "IN-TRANSIT": T,
  "IN TRANSIT": T,
  "BAG SCANNED AT DC": sub(T, "reached_destination"),
  "SHIPMENT REACHED AT DC": sub(T, "reached_destination"),
  "OUT FOR DELIVERY": O,
  "SHIPMENT OUT FOR DELIVERY": O,
  DELIVERED: D,
  "SHIPMENT DELIVERED": D,
  UNDELIVERED: sub(E, "delivery_attempt_failed"),
  "RTO INITIATED": sub(E, "rto_in_transit"),
  "RTO IN-TRANSIT": sub(E, "rto_in_transit"),
  "RTO LOCK": sub(E, "rto_in_transit"),
  "RETURNED TO SHIPPER": sub(R, "rto_delivered"),
  "RTO DELIVERED": sub(R, "rto_delivered"),
  "SHIPMENT CANCELLED": C,
  CANCELLED: C,
  LOST: sub(E, "lost"),
};

/** Maps one Ecom Express status: code → exact text → shared keywords → in transit. */
export function ecomRule(code: string, text: string): StatusRule {
  return ECOM_CODE[code.trim()] ?? ECOM_TEXT[text.toUpperCase().trim()] ?? byKeyword(text) ?? T;
}

type Node = Record<string, unknown>;
const obj = (v: unknown): Node => (v && typeof v === "object" && !Array.isArray(v) ? (v as Node) : {});
const str = (v: unknown): string => {
  if (typeof v === "string") return v.trim();
  if (typeof v === "number") return String(v);
  if (v && typeof v === "object" && "#text" in v) return str((v as Node)["#text"]);
  return "";
};
/** Django-serializer nulls arrive as "None". */
const val = (v: unknown): string => {
  const s = str(v);
  return s === "None" || s === "null" ? "" : s;
};

/** `<field name="x">…</field>` children of an `<object>` by name (the field node itself, for nested scans). */
function fieldsOf(object: Node): Map<string, Node> {
  const out = new Map<string, Node>();
  for (const f of asArray(object.field as unknown)) {
    const n = obj(f);
    const name = str(n["@name"]);
    if (name) out.set(name, n);
  }
  return out;
}

function toCheckpoint(scan: Node): RawCheckpoint | undefined {
  const f = fieldsOf(scan);
  const get = (k: string) => val(f.get(k));
  const status = get("status");
  const code = get("reason_code_number");
  const reason = get("reason_code");
  const when = parseNaive(get("updated_on"));
  if (!when) return undefined;
  const rule = ecomRule(code, status);
  return {
    state: rule.state,
    subStatus: rule.sub ?? null,
    activity: status,
    location: get("location_city") || get("city_name") || get("location"),
    ...when,
    rawCode: code || null,
    rawStatus: status || null,
    remark: rule.state === "exception" ? reason || status || null : null,
  };
}

/**
 * Parses a `track_me/api/mawbd/` XML document for `awb`.
 * @throws CourierError not_found (no object for the AWB), auth (error text about credentials), backend (not that document)
 */
export function parseEcomExpress(text: string, awb: string): TrackingSnapshot {
  if (!text.trimStart().startsWith("<") && /unauthori[sz]ed|invalid (user|username|credentials|password)|authentication/i.test(text))
    throw new CourierError("auth", "ecomexpress: username or password refused");
  const doc = parseXml(text);
  if (!("ecomexpress-objects" in doc)) throw new CourierError("backend", "ecomexpress: no ecomexpress-objects element");
  const objects = asArray(obj(doc["ecomexpress-objects"]).object as unknown).map(obj);
  const match = objects.find((o) => val(fieldsOf(o).get("awb_number")) === awb) ?? (objects.length === 1 ? objects[0] : undefined);
  if (!match) throw new CourierError("not_found", `ecomexpress: no record of ${awb}`);
  const f = fieldsOf(match);
  const get = (k: string) => val(f.get(k));
  const scans = asArray(obj(f.get("scans")).object as unknown).map(obj);
  const checkpoints = scans.map(toCheckpoint).filter((c): c is RawCheckpoint => Boolean(c));
  const status = get("status");
  const rtoNumber = get("ref_awb") || null;
  let rule = ecomRule(get("reason_code_number"), status);
  if (rtoNumber && rule.state !== "returned") rule = sub(E, "rto_in_transit");
  const at = parseNaive(get("last_update_date"));
  const newest = checkpoints.reduce<RawCheckpoint | undefined>((a, c) => (!a || c.at >= a.at ? c : a), undefined);
  return {
    checkpoints,
    summary: status ? { state: rule.state, subStatus: rule.sub ?? null, rawCode: get("reason_code_number") || null, rawStatus: status, at: at?.at ?? null } : undefined,
    originCity: get("origin") || null,
    destinationCity: get("destination") || null,
    podUrl: null,
    remark: newest?.remark ?? (rule.state === "exception" ? get("reason_code_description") || null : null),
    rtoNumber,
  };
}

export const ecomexpressAdapter: CourierAdapter = {
  id: "ecomexpress",
  defaultBaseUrl: "https://plapi.ecomexpress.in",
  envPrefix: "ECOMEXPRESS",
  credentialVars: ["ECOMEXPRESS_USERNAME", "ECOMEXPRESS_PASSWORD"],
  async track(awb, ctx) {
    const form = new URLSearchParams({ awb, username: ctx.credentials.ECOMEXPRESS_USERNAME ?? "", password: ctx.credentials.ECOMEXPRESS_PASSWORD ?? "" });
    const res = await ctx.http.request({
      method: "POST",
      path: "/track_me/api/mawbd/",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/xml, text/xml" },
      body: form.toString(),
      signal: ctx.signal,
    });
    if (res.status === 403) throw new CourierError("rate_limited", "ecomexpress: throttled (403)", 403);
    classifyHttpStatus("ecomexpress", res.status, { notFoundOn404: false });
    return parseEcomExpress(res.text, awb);
  },
};
