/** Ecom Express twin: the documented `ecomexpress-objects` XML (fixtures/SOURCE.md). */
import { XMLBuilder } from "fast-xml-parser";
import { sandboxCredential } from "../../../../twin-kit/credentials.ts";
import type { EcomAwbField, EcomDocument, EcomField, EcomScan } from "./wire.ts";
import { firstEvent, latest, wallTime, type SimEvent, type SimEventKind } from "../../../../twin-kit/scenario.ts";
import type { Twin } from "../../../../twin-kit/twin.ts";

const RENDER: Record<SimEventKind, { status: string; code: string }> = {
  manifested: { status: "Soft data uploaded", code: "" },
  picked_up: { status: "Shipment Picked Up", code: "" },
  in_transit: { status: "Shipment in-transit", code: "" },
  reached_destination: { status: "Bag scanned at DC", code: "" },
  out_for_delivery: { status: "Out for delivery", code: "" },
  delivered: { status: "Delivered", code: "999" },
  delivery_failed: { status: "Undelivered", code: "" },
  rto_initiated: { status: "RTO Initiated", code: "" },
  returned: { status: "Returned to shipper", code: "" },
  cancelled: { status: "Shipment Cancelled", code: "" },
};

const MON = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const p2 = (n: number) => String(n).padStart(2, "0");

/** `05 Nov, 2026, 10:20` in IST (the documented `%d %b, %Y, %H:%M`). */
function ecomTime(ms: number): string {
  const w = wallTime(ms, 330);
  return `${p2(w.d)} ${MON[w.mo - 1]}, ${w.y}, ${p2(w.h)}:${p2(w.mi)}`;
}

const field = (name: string, value: string, type = "CharField"): EcomField => ({
  "@type": type,
  "@name": name,
  "#text": value,
});

function scanObject(e: SimEvent, i: number): EcomScan {
  const r = RENDER[e.kind];
  const city = e.location.toUpperCase();
  return {
    "@pk": String(i + 1),
    "@model": "scan_stages",
    field: [
      field("updated_on", ecomTime(e.at), "DateTimeField"),
      field("status", r.status),
      field("reason_code", e.remark ?? ""),
      field("reason_code_number", r.code),
      field("location", `${city.slice(0, 3)}/DC1`),
      field("location_city", city),
      field("location_type", "Service Center"),
      field("city_name", city),
      field("Employee", "Sandbox Employee"),
    ],
  };
}

/** fast-xml-parser's builder: the adapter's parser read backwards (attributes `@`, text in `#text`, escaped). */
const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  format: true,
  suppressEmptyNode: false,
});

const xml = (doc: EcomDocument) =>
  new Response(`<?xml version="1.0" encoding="utf-8"?>\n${builder.build(doc)}`, {
    headers: { "content-type": "application/xml; charset=utf-8" },
  });

export const ecomexpressTwin: Twin = {
  id: "ecomexpress",
  async handle(req, url, sim) {
    if (!url.pathname.endsWith("/track_me/api/mawbd/")) return new Response("Not Found", { status: 404 });
    const form = req.method === "POST" ? new URLSearchParams(await req.text()) : url.searchParams;
    if (
      form.get("username") !== sandboxCredential("ECOMEXPRESS_USERNAME") ||
      form.get("password") !== sandboxCredential("ECOMEXPRESS_PASSWORD")
    )
      return new Response("Unauthorised access", { status: 401, headers: { "content-type": "text/plain" } });
    const awb = ((form.get("awb") ?? "").split(",")[0] ?? "").trim();
    sim.count("ecomexpress", awb);
    const gated = await sim.gate(awb);
    if (gated) return gated;
    const s = sim.scenario(awb);
    if (s.kind !== "found") return xml({ "ecomexpress-objects": { "@version": "1.0" } });
    const last = latest(s);
    const delivered = s.events.find((e) => e.kind === "delivered");
    const rto = s.events.some((e) => e.kind === "rto_initiated");
    const scans: EcomAwbField = s.noScans
      ? field("scans", "")
      : { "@type": "CharField", "@name": "scans", object: [...s.events].reverse().map(scanObject) };
    const fields: EcomAwbField[] = [
      field("awb_number", awb, "BigIntegerField"),
      field("orderid", `SBX${awb.slice(-6)}`),
      field("actual_weight", "0.5", "FloatField"),
      field("origin", s.origin.toUpperCase()),
      field("destination", s.destination.toUpperCase()),
      field("location_name", last.location.toUpperCase()),
      field("current_location_name", last.location.toUpperCase()),
      field("customer", "SANDBOX SHOP"),
      field("consignee", "Sandbox Consignee"),
      field("pickupdate", ecomTime(firstEvent(s).at), "DateTimeField"),
      field("status", RENDER[last.kind].status),
      field("reason_code", last.remark ?? ""),
      field("reason_code_number", RENDER[last.kind].code),
      field("reason_code_description", last.remark ?? ""),
      field("receiver", delivered ? "SELF" : ""),
      field("expected_date", ecomTime(firstEvent(s).at + 96 * 3_600_000), "DateTimeField"),
      field("last_update_date", ecomTime(last.at), "DateTimeField"),
      field("delivery_date", delivered ? ecomTime(delivered.at) : "None", "DateTimeField"),
      field("ref_awb", rto ? `9${awb.slice(-9)}` : "None"),
      field("rts_shipment", rto ? "1" : "0"),
      field("system_delivery_update", delivered ? ecomTime(delivered.at) : "None", "DateTimeField"),
      scans,
    ];
    return xml({
      "ecomexpress-objects": { "@version": "1.0", object: { "@pk": "1", "@model": "awb", field: fields } },
    });
  },
};
