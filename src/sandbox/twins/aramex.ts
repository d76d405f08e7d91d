/**
 * Aramex Tracking twin: `POST /aramex/ShippingAPI.V2/Tracking/Service_1_0.svc`
 * (SOAP 1.1, `SOAPAction: …/Service_1_0/TrackShipments`), credentials checked in
 * the body's `ClientInfo` (sandbox values; a mismatch answers the ERR01
 * notification of `test/fixtures/couriers/aramex/track-soap-error.xml`). Answers are shaped like
 * `track-soap.xml` (naive `UpdateDateTime`, rendered in UTC); unknown
 * numbers are listed in `NonExistingWaybills` (`track-soap-nonexistent.xml`).
 */
import { XMLParser } from "fast-xml-parser";
import { sandboxCredential } from "../credentials.ts";
import { wallTime, type SimEvent, type SimEventKind } from "../scenario.ts";
import type { Twin } from "../twin.ts";

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

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const NS = `xmlns:i="http://www.w3.org/2001/XMLSchema-instance" xmlns:a="http://schemas.microsoft.com/2003/10/Serialization/Arrays"`;

function envelope(inner: { notifications?: string; hasErrors?: boolean; results?: string; missing?: string[] }): Response {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/">
   <s:Body>
      <ShipmentTrackingResponse xmlns="http://ws.aramex.net/ShippingAPI/v1/">
         <Transaction xmlns:i="http://www.w3.org/2001/XMLSchema-instance" i:nil="true"/>
         ${inner.notifications ? `<Notifications xmlns:i="http://www.w3.org/2001/XMLSchema-instance">${inner.notifications}</Notifications>` : `<Notifications xmlns:i="http://www.w3.org/2001/XMLSchema-instance"/>`}
         <HasErrors>${inner.hasErrors ? "true" : "false"}</HasErrors>
         ${inner.results ? `<TrackingResults ${NS}>${inner.results}</TrackingResults>` : `<TrackingResults ${NS}/>`}
         ${inner.missing?.length ? `<NonExistingWaybills ${NS}>${inner.missing.map((m) => `<a:string>${esc(m)}</a:string>`).join("")}</NonExistingWaybills>` : `<NonExistingWaybills ${NS}/>`}
      </ShipmentTrackingResponse>
   </s:Body>
</s:Envelope>`;
  return new Response(xml, { headers: { "content-type": "text/xml; charset=utf-8" } });
}

function resultOf(awb: string, e: SimEvent): string {
  const r = RENDER[e.kind];
  const w = wallTime(e.at, 0);
  return `<TrackingResult>
                     <WaybillNumber>${esc(awb)}</WaybillNumber>
                     <UpdateCode>${r.code}</UpdateCode>
                     <UpdateDescription>${esc(r.text)}</UpdateDescription>
                     <UpdateDateTime>${w.date}T${w.time}</UpdateDateTime>
                     <UpdateLocation>${esc(e.location)}, India</UpdateLocation>
                     ${e.remark ? `<Comments>${esc(e.remark)}</Comments>` : "<Comments/>"}
                     ${r.problem ? `<ProblemCode>${r.problem}</ProblemCode>` : "<ProblemCode/>"}
                     <GrossWeight>0.5</GrossWeight>
                     <ChargeableWeight>0.5</ChargeableWeight>
                     <WeightUnit>KG</WeightUnit>
                  </TrackingResult>`;
}

const parser = new XMLParser({ removeNSPrefix: true, parseTagValue: false, processEntities: false, ignoreAttributes: true });
type Obj = Record<string, unknown>;
const o = (v: unknown): Obj => (typeof v === "object" && v !== null ? (v as Obj) : {});

export const aramexTwin: Twin = {
  id: "aramex",
  async handle(req, url, sim) {
    if (req.method !== "POST" || !url.pathname.endsWith("/ShippingAPI.V2/Tracking/Service_1_0.svc")) return new Response("Endpoint not found.", { status: 404, headers: { "content-type": "text/html" } });
    if (!(req.headers.get("soapaction") ?? "").includes("TrackShipments")) return new Response("The message with Action '' cannot be processed at the receiver.", { status: 500, headers: { "content-type": "text/xml" } });
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
    if (!ok) return envelope({ hasErrors: true, notifications: "<Notification><Code>ERR01</Code><Message>ClientInfo - Invalid username or password</Message></Notification>" });
    const shipments = o(request.Shipments).string;
    const numbers = (Array.isArray(shipments) ? shipments : [shipments]).map((s) => String(s ?? "").trim()).filter(Boolean);
    for (const n of numbers) sim.count("aramex", n);
    const gated = numbers[0] ? await sim.gate(numbers[0]) : undefined;
    if (gated) return gated;
    const missing: string[] = [];
    let results = "";
    for (const awb of numbers) {
      const s = sim.scenario(awb);
      if (s.kind !== "found") {
        missing.push(awb);
        continue;
      }
      const updates = s.noScans ? "" : [...s.events].reverse().map((e) => resultOf(awb, e)).join("");
      results += `<a:KeyValueOfstringArrayOfTrackingResultmFAkxlpY><a:Key>${esc(awb)}</a:Key><a:Value>${updates}</a:Value></a:KeyValueOfstringArrayOfTrackingResultmFAkxlpY>`;
    }
    return envelope({ results, missing });
  },
};
