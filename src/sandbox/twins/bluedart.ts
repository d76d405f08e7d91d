/**
 * Blue Dart twin: `GET /bluedart/RoutingServlet?handler=tnt&action=custawbquery&loginid&awb=awb&numbers&format=xml&lickey&verno=1.3&scan=1`,
 * credentials checked like the real servlet (login id + licence key in the
 * query), answering XML shaped like `bluedart-tnt.xml`: `ShipmentData/Shipment[@WaybillNo]`,
 * scans newest first, `dd-Mon-yyyy` + `HH:MM` IST. Not found is the courier's
 * own `StatusType NF` / "Incorrect Waybill number or No Information" inside a 200.
 */
import { sandboxCredential } from "../../modules/couriers/adapters/index.ts";
import { wallTime, type SimEvent, type SimEventKind } from "../scenario.ts";
import type { Twin } from "../server.ts";

const RENDER: Record<SimEventKind, { type: string; scan: string }> = {
  manifested: { type: "UD", scan: "Online Shipment Booked" },
  picked_up: { type: "PU", scan: "Shipment Picked Up" },
  in_transit: { type: "UD", scan: "SHIPMENT OUTSCANNED TO NETWORK" },
  reached_destination: { type: "UD", scan: "Shipment Arrived At Destination" },
  out_for_delivery: { type: "UD", scan: "Shipment Outscan" },
  delivered: { type: "DL", scan: "Shipment delivered" },
  delivery_failed: { type: "UD", scan: "CONSIGNEE NOT AVAILABLE" },
  rto_initiated: { type: "RT", scan: "RTO - RETURN TO ORIGIN INITIATED" },
  returned: { type: "RT", scan: "SHIPMENT RETURNED TO SHIPPER" },
  cancelled: { type: "UD", scan: "SHIPMENT CANCELLED BY SHIPPER" },
};

const MON = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const MONTH = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const p2 = (n: number) => String(n).padStart(2, "0");
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function ist(ms: number) {
  const w = wallTime(ms, 330);
  return { scanDate: `${p2(w.d)}-${MON[w.mo - 1]}-${w.y}`, statusDate: `${p2(w.d)} ${MONTH[w.mo - 1]} ${w.y}`, time: `${p2(w.h)}:${p2(w.mi)}` };
}

function scanXml(e: SimEvent): string {
  const r = RENDER[e.kind];
  const t = ist(e.at);
  const text = e.kind === "delivery_failed" && e.remark ? e.remark.toUpperCase() : r.scan;
  return `      <ScanDetail>\n        <Scan>${esc(text)}</Scan>\n        <ScanType>${r.type}</ScanType>\n        <ScanDate>${t.scanDate}</ScanDate>\n        <ScanTime>${t.time}</ScanTime>\n        <ScannedLocation>${esc(e.location.toUpperCase())}</ScannedLocation>\n      </ScanDetail>`;
}

const xml = (body: string) => new Response(`<?xml version="1.0" ?>\n<ShipmentData>\n${body}\n</ShipmentData>\n`, { headers: { "content-type": "text/xml; charset=utf-8" } });

export const bluedartTwin: Twin = {
  id: "bluedart",
  async handle(_req, url, sim) {
    if (!url.pathname.endsWith("/RoutingServlet")) return new Response("Not Found", { status: 404 });
    const q = url.searchParams;
    if (q.get("handler") !== "tnt" || q.get("action") !== "custawbquery") return xml("  <Error>Invalid handler or action</Error>");
    if (q.get("loginid") !== sandboxCredential("BLUEDART_LOGIN_ID") || q.get("lickey") !== sandboxCredential("BLUEDART_LICENSE_KEY")) return xml("  <Error>License Mismatch</Error>");
    const awb = (q.get("numbers") ?? "").split(",")[0] ?? "";
    sim.count("bluedart", awb);
    const gated = await sim.gate(awb);
    if (gated) return gated;
    const s = sim.scenario(awb);
    if (s.kind !== "found")
      return xml(`  <Shipment WaybillNo="${esc(awb)}">\n    <Status>Incorrect Waybill number or No Information</Status>\n    <StatusType>NF</StatusType>\n  </Shipment>`);
    const last = s.events[s.events.length - 1]!;
    const lt = ist(last.at);
    const scans = s.noScans ? "" : [...s.events].reverse().map(scanXml).join("\n");
    const lastText = last.kind === "delivery_failed" && last.remark ? last.remark.toUpperCase() : RENDER[last.kind].scan;
    return xml(
      [
        `  <Shipment WaybillNo="${esc(awb)}" RefNo="SBX-${esc(awb.slice(-6))}">`,
        `    <Service>Domestic Priority</Service>`,
        `    <PickUpDate>${ist(s.events[0]!.at).statusDate}</PickUpDate>`,
        `    <Origin>${esc(s.origin.toUpperCase())}</Origin>`,
        `    <Destination>${esc(s.destination.toUpperCase())}</Destination>`,
        `    <ProductType>Non Documents</ProductType>`,
        `    <Status>${esc(lastText)}</Status>`,
        `    <StatusType>${RENDER[last.kind].type}</StatusType>`,
        `    <StatusDate>${lt.statusDate}</StatusDate>`,
        `    <StatusTime>${lt.time}</StatusTime>`,
        `    <ReceivedBy>${last.kind === "delivered" ? "SIGN" : ""}</ReceivedBy>`,
        `    <Scans>${scans ? `\n${scans}\n    ` : ""}</Scans>`,
        `  </Shipment>`,
      ].join("\n"),
    );
  },
};
