/** Blue Dart twin: the TnT servlet, answers shaped like fixtures/tnt.xml (NF inside a 200). */
import { XMLBuilder } from "fast-xml-parser";
import { sandboxCredential } from "../../../../twin-kit/credentials.ts";
import type { BluedartDocument, BluedartScan, BluedartShipment } from "./wire.ts";
import {
  firstEvent,
  latest,
  failedAttemptFamily,
  wallTime,
  type SimEvent,
  type SimEventKind,
} from "../../../../twin-kit/scenario.ts";
import type { Twin } from "../../../../twin-kit/twin.ts";

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
const MONTH = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
const p2 = (n: number) => String(n).padStart(2, "0");

function ist(ms: number) {
  const w = wallTime(ms, 330);
  return {
    scanDate: `${p2(w.d)}-${MON[w.mo - 1]}-${w.y}`,
    statusDate: `${p2(w.d)} ${MONTH[w.mo - 1]} ${w.y}`,
    time: `${p2(w.h)}:${p2(w.mi)}`,
  };
}

/**
 * The failed attempt's `ScanCode` (group `T`) per reason family (README.md, "Sandbox couriers"), from the codes the
 * adapter knows (reasons.ts); families with no code in our source (premises closed, weather, held) go by wording alone.
 */
const FAILED_CODE: Readonly<Record<number, string>> = {
  20: "003",
  21: "011",
  22: "008",
  23: "044",
  24: "001",
  26: "002",
  27: "025",
  28: "021",
};

const scanText = (e: SimEvent) =>
  e.kind === "delivery_failed" && e.remark ? e.remark.toUpperCase() : RENDER[e.kind].scan;

function failedCode(e: SimEvent): Pick<BluedartScan, "ScanCode" | "ScanGroupType"> {
  const family = e.kind === "delivery_failed" ? failedAttemptFamily(e.remark) : undefined;
  const code = family === undefined ? undefined : FAILED_CODE[family];
  return code ? { ScanCode: code, ScanGroupType: "T" } : {};
}

function scanOf(e: SimEvent): BluedartScan {
  const t = ist(e.at);
  return {
    Scan: scanText(e),
    ...failedCode(e),
    ScanType: RENDER[e.kind].type,
    ScanDate: t.scanDate,
    ScanTime: t.time,
    ScannedLocation: e.location.toUpperCase(),
  };
}

/** fast-xml-parser's builder: the adapter's parser read backwards (attributes `@`, text escaped). */
const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  format: true,
  suppressEmptyNode: false,
});

const xml = (doc: BluedartDocument) =>
  new Response(`<?xml version="1.0" ?>\n${builder.build(doc)}`, {
    headers: { "content-type": "text/xml; charset=utf-8" },
  });

export const bluedartTwin: Twin = {
  id: "bluedart",
  async handle(_req, url, sim) {
    if (!url.pathname.endsWith("/RoutingServlet")) return new Response("Not Found", { status: 404 });
    const q = url.searchParams;
    if (q.get("handler") !== "tnt" || q.get("action") !== "custawbquery")
      return xml({ ShipmentData: { Error: "Invalid handler or action" } });
    if (
      q.get("loginid") !== sandboxCredential("BLUEDART_LOGIN_ID") ||
      q.get("lickey") !== sandboxCredential("BLUEDART_LICENSE_KEY")
    )
      return xml({ ShipmentData: { Error: "License Mismatch" } });
    const awb = (q.get("numbers") ?? "").split(",")[0] ?? "";
    sim.count("bluedart", awb);
    const gated = await sim.gate(awb);
    if (gated) return gated;
    const s = sim.scenario(awb);
    if (s.kind !== "found")
      return xml({
        ShipmentData: {
          Shipment: { "@WaybillNo": awb, Status: "Incorrect Waybill number or No Information", StatusType: "NF" },
        },
      });
    const last = latest(s);
    const lt = ist(last.at);
    const shipment: BluedartShipment = {
      "@WaybillNo": awb,
      "@RefNo": `SBX-${awb.slice(-6)}`,
      Service: "Domestic Priority",
      PickUpDate: ist(firstEvent(s).at).statusDate,
      Origin: s.origin.toUpperCase(),
      Destination: s.destination.toUpperCase(),
      ProductType: "Non Documents",
      Status: scanText(last),
      StatusType: RENDER[last.kind].type,
      StatusDate: lt.statusDate,
      StatusTime: lt.time,
      ReceivedBy: last.kind === "delivered" ? "SIGN" : "",
      // The EDD until delivery; the real delivered sample carries no ExpectedDeliveryDate.
      ...(s.edd && last.kind !== "delivered"
        ? { ExpectedDeliveryDate: ist(Date.parse(`${s.edd}T12:00:00+05:30`)).statusDate }
        : {}),
      Scans: s.noScans ? "" : { ScanDetail: [...s.events].reverse().map(scanOf) },
    };
    return xml({ ShipmentData: { Shipment: shipment } });
  },
};
