/** Aramex tracking twin (SOAP 1.1), answers shaped like fixtures/track-soap*.xml. */
import { XMLBuilder, XMLParser } from "fast-xml-parser";
import { sandboxCredential } from "../../../../twin-kit/credentials.ts";
import type { AramexDocument, AramexNotification, AramexResultPair, AramexTrackingResult } from "./wire.ts";
import { wallTime, type SimEvent, type SimEventKind } from "../../../../twin-kit/scenario.ts";
import type { Twin } from "../../../../twin-kit/twin.ts";

const RENDER: Record<SimEventKind, { code: string; text: string; problem?: string }> = {
  manifested: { code: "SH014", text: "Record created." },
  picked_up: { code: "SH012", text: "Picked Up From Shipper" },
  in_transit: { code: "SH022", text: "Departed Origin Facility" },
  reached_destination: { code: "SH001", text: "Shipment received at destination warehouse" },
  out_for_delivery: { code: "SH003", text: "Out for Delivery" },
  delivered: { code: "SH005", text: "Delivered" },
  delivery_failed: { code: "SH033", text: "Attempted Delivery", problem: "A07" },
  rto_initiated: { code: "SH069", text: "Return to Shipper initiated" },
  returned: { code: "SH234", text: "Returned to Shipper" },
  cancelled: { code: "SH203", text: "Shipment Cancelled" },
};

/** The namespaces of the real answer (`track-soap.xml`). */
const SOAP = "http://schemas.xmlsoap.org/soap/envelope/";
const XSI = "http://www.w3.org/2001/XMLSchema-instance";
const ARRAYS = "http://schemas.microsoft.com/2003/10/Serialization/Arrays";
const XSI_ARRAYS = { "@xmlns:i": XSI, "@xmlns:a": ARRAYS };

/** Each element's WCF prefix and namespace declarations, as in track-soap.xml (the adapter's parser drops both). */
const ON_WIRE: Readonly<Record<string, { prefix?: string; xmlns?: Readonly<Record<string, string>> }>> = {
  Envelope: { prefix: "s", xmlns: { "@xmlns:s": SOAP } },
  Body: { prefix: "s" },
  ShipmentTrackingResponse: { xmlns: { "@xmlns": "http://ws.aramex.net/ShippingAPI/v1/" } },
  Transaction: { xmlns: { "@xmlns:i": XSI } },
  Notifications: { xmlns: { "@xmlns:i": XSI } },
  TrackingResults: { xmlns: XSI_ARRAYS },
  NonExistingWaybills: { xmlns: XSI_ARRAYS },
  Key: { prefix: "a" },
  Value: { prefix: "a" },
  string: { prefix: "a" },
};
const placeOf = (name: string) =>
  name.startsWith("KeyValueOfstringArrayOfTrackingResult") ? { prefix: "a" } : (ON_WIRE[name] ?? {});
const wireName = (name: string) =>
  name === "@nil" ? "@i:nil" : name.startsWith("@") ? name : [placeOf(name).prefix, name].filter(Boolean).join(":");

/** Element `name`'s parsed value with its prefixes and `xmlns` declarations put back, for the builder. */
function onTheWire(name: string, v: unknown): unknown {
  if (Array.isArray(v)) return v.map((item) => onTheWire(name, item));
  const xmlns = placeOf(name).xmlns ?? {};
  if (typeof v !== "object" || v === null)
    return v === "" ? { ...xmlns } : Object.keys(xmlns).length ? { ...xmlns, "#text": v } : v;
  return Object.fromEntries([
    ...Object.entries(xmlns),
    ...Object.entries(v).map(([k, c]) => [wireName(k), k.startsWith("@") ? c : onTheWire(k, c)]),
  ]);
}

/** fast-xml-parser's builder: the adapter's parser read backwards (`<Comments/>` for "", `i:nil="true"` kept as written). */
const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  format: true,
  suppressEmptyNode: true,
  suppressBooleanAttributes: false,
});

/** A 200 SOAP answer: `HasErrors` when there are notifications; empty lists as the empty elements Aramex sends. */
function envelope(parts: {
  notifications?: AramexNotification[];
  results?: AramexResultPair[];
  missing?: string[];
}): Response {
  const errors = Boolean(parts.notifications?.length);
  const doc: AramexDocument = {
    Envelope: {
      Body: {
        ShipmentTrackingResponse: {
          Transaction: { "@nil": "true" },
          Notifications: errors ? { Notification: parts.notifications } : "",
          HasErrors: errors ? "true" : "false",
          TrackingResults: parts.results?.length
            ? { KeyValueOfstringArrayOfTrackingResultmFAkxlpY: parts.results }
            : "",
          NonExistingWaybills: parts.missing?.length ? { string: parts.missing } : "",
        },
      },
    },
  };
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build({ "s:Envelope": onTheWire("Envelope", doc.Envelope) })}`;
  return new Response(xml, { headers: { "content-type": "text/xml; charset=utf-8" } });
}

function resultOf(awb: string, e: SimEvent): AramexTrackingResult {
  const r = RENDER[e.kind];
  const w = wallTime(e.at, 0);
  return {
    WaybillNumber: awb,
    UpdateCode: r.code,
    UpdateDescription: r.text,
    UpdateDateTime: `${w.date}T${w.time}`,
    UpdateLocation: `${e.location}, India`,
    Comments: e.remark ?? "",
    ProblemCode: r.problem ?? "",
    GrossWeight: "0.5",
    ChargeableWeight: "0.5",
    WeightUnit: "KG",
  };
}

const parser = new XMLParser({
  removeNSPrefix: true,
  parseTagValue: false,
  processEntities: false,
  ignoreAttributes: true,
});
type Obj = Record<string, unknown>;
const o = (v: unknown): Obj => (typeof v === "object" && v !== null ? (v as Obj) : {});

export const aramexTwin: Twin = {
  id: "aramex",
  async handle(req, url, sim) {
    if (req.method !== "POST" || !url.pathname.endsWith("/ShippingAPI.V2/Tracking/Service_1_0.svc"))
      return new Response("Endpoint not found.", { status: 404, headers: { "content-type": "text/html" } });
    if (!(req.headers.get("soapaction") ?? "").includes("TrackShipments"))
      return new Response("The message with Action '' cannot be processed at the receiver.", {
        status: 500,
        headers: { "content-type": "text/xml" },
      });
    let request: Obj;
    try {
      const text = await req.text();
      if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new Error("DTD refused");
      request = o(o(o(o(parser.parse(text)).Envelope).Body).ShipmentTrackingRequest);
    } catch {
      return new Response("Bad Request", { status: 400, headers: { "content-type": "text/html" } });
    }
    const client = o(request.ClientInfo);
    const ok =
      String(client.UserName ?? "") === sandboxCredential("ARAMEX_USERNAME") &&
      String(client.Password ?? "") === sandboxCredential("ARAMEX_PASSWORD") &&
      String(client.AccountNumber ?? "") === sandboxCredential("ARAMEX_ACCOUNT_NUMBER") &&
      String(client.AccountPin ?? "") === sandboxCredential("ARAMEX_ACCOUNT_PIN");
    if (!ok)
      return envelope({ notifications: [{ Code: "ERR01", Message: "ClientInfo - Invalid username or password" }] });
    const shipments = o(request.Shipments).string;
    const numbers = (Array.isArray(shipments) ? shipments : [shipments])
      .map((s) => String(s ?? "").trim())
      .filter(Boolean);
    for (const n of numbers) sim.count("aramex", n);
    const gated = numbers[0] ? await sim.gate(numbers[0]) : undefined;
    if (gated) return gated;
    const missing: string[] = [];
    const results: AramexResultPair[] = [];
    for (const awb of numbers) {
      const s = sim.scenario(awb);
      if (s.kind !== "found") {
        missing.push(awb);
        continue;
      }
      // Updates newest first; a known waybill without updates has an empty `a:Value`.
      results.push({
        Key: awb,
        Value: s.noScans ? "" : { TrackingResult: [...s.events].reverse().map((e) => resultOf(awb, e)) },
      });
    }
    return envelope({ results, missing });
  },
};
