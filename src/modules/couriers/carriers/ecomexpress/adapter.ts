/** Ecom Express `track_me/api/mawbd/` (fixtures/SOURCE.md); details: README.md in this folder. */
import {
  asArray,
  checkWire,
  checkpoint,
  checkpointsOf,
  newestOf,
  parseXml,
  str,
  summary,
  throwForStatus,
} from "../../adapters/kit.ts";
import { byKeyword, sub, C, D, E, O, P, R, T, type StatusRule, type StatusTable } from "../../adapters/status-map.ts";
import { parseNaive } from "../../adapters/time.ts";
import { CourierError, type CourierAdapter } from "../../adapters/types.ts";
import type { RawCheckpoint, TrackingSnapshot } from "../../../../domain/checkpoint.ts";
import { EcomDocument, type EcomScan } from "./wire.ts";

/** `reason_code_number` → state. Only 999 is documented (unverified); add codes here as they are confirmed. */
const ECOM_CODE: StatusTable = {
  "999": D,
};

/** Status text (upper-cased, exact) → state. Wording from public parser code; unverified. */
const ECOM_TEXT: StatusTable = {
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

/** Maps one Ecom Express status: code → exact text → common keywords → in transit. */
export function ecomRule(code: string, text: string): StatusRule {
  return ECOM_CODE[code.trim()] ?? ECOM_TEXT[text.toUpperCase().trim()] ?? byKeyword(text) ?? T;
}

/** Django-serializer nulls arrive as "None". */
const val = (v: unknown): string => {
  const s = str(v);
  return s === "None" || s === "null" ? "" : s;
};

/** `<field name="x">…</field>` children of an `<object>` by name (the field node itself, for nested scans). */
function fieldsOf<F extends { "@name"?: unknown }>(object: { field?: F | F[] }): Map<string, F> {
  const out = new Map<string, F>();
  for (const f of asArray(object.field)) {
    const name = str(f["@name"]);
    if (name) out.set(name, f);
  }
  return out;
}

function toCheckpoint(scan: EcomScan): RawCheckpoint | undefined {
  const f = fieldsOf(scan);
  const get = (k: string) => val(f.get(k));
  const status = get("status");
  const code = get("reason_code_number");
  const reason = get("reason_code");
  const when = parseNaive(get("updated_on"));
  if (!when) return undefined;
  const rule = ecomRule(code, status);
  return checkpoint(rule, when, {
    activity: status,
    location: get("location_city") || get("city_name") || get("location"),
    rawCode: code || null,
    rawStatus: status || null,
    remark: rule.state === "exception" ? reason || status || null : null,
  });
}

/**
 * Parses a `track_me/api/mawbd/` XML document for `awb`.
 * @throws CourierError not_found (no object for the AWB), auth (error text about credentials), backend (not that document)
 */
export function parseEcomExpress(text: string, awb: string): TrackingSnapshot {
  if (
    !text.trimStart().startsWith("<") &&
    /unauthori[sz]ed|invalid (user|username|credentials|password)|authentication/i.test(text)
  )
    throw new CourierError("auth", "ecomexpress: username or password refused");
  const raw = parseXml(text);
  if (!("ecomexpress-objects" in raw)) throw new CourierError("backend", "ecomexpress: no ecomexpress-objects element");
  const root = checkWire("ecomexpress", EcomDocument, raw)["ecomexpress-objects"];
  const objects = root === "" ? [] : asArray(root.object);
  const match =
    objects.find((o) => val(fieldsOf(o).get("awb_number")) === awb) ?? (objects.length === 1 ? objects[0] : undefined);
  if (!match) throw new CourierError("not_found", `ecomexpress: no record of ${awb}`);
  const f = fieldsOf(match);
  const get = (k: string) => val(f.get(k));
  const checkpoints = checkpointsOf(asArray(f.get("scans")?.object), toCheckpoint);
  const status = get("status");
  const rtoNumber = get("ref_awb") || null;
  let rule = ecomRule(get("reason_code_number"), status);
  if (rtoNumber && rule.state !== "returned") rule = sub(E, "rto_in_transit");
  const at = parseNaive(get("last_update_date"));
  const newest = newestOf(checkpoints, "last-listed");
  return {
    checkpoints,
    summary: status
      ? summary(rule, { rawCode: get("reason_code_number") || null, rawStatus: status, at: at?.at ?? null })
      : undefined,
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
    const form = new URLSearchParams({
      awb,
      username: ctx.credentials.ECOMEXPRESS_USERNAME ?? "",
      password: ctx.credentials.ECOMEXPRESS_PASSWORD ?? "",
    });
    const res = await ctx.http.request({
      method: "POST",
      path: "/track_me/api/mawbd/",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/xml, text/xml" },
      body: form.toString(),
      signal: ctx.signal,
    });
    throwForStatus("ecomexpress", res.status, { notFoundOn404: false });
    return parseEcomExpress(res.text, awb);
  },
};
