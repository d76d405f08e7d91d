/**
 * Delhivery twin: `GET /delhivery/api/v1/packages/json/`, documents shaped like the real fixtures; the NDR action
 * API (`POST /api/p/update`, `GET /api/cmu/get_bulk_upl/<UPL>`) and the Cancel Order API (`POST /api/p/edit`) as
 * in twin-actions.ts, whose accepted actions move the shipment the tracking answer shows.
 */
import { sandboxCredential } from "../../../../twin-kit/credentials.ts";
import type { DelhiveryResponse, DelhiveryScan } from "./wire.ts";
import { failedAttemptFamily, wallTime, type SimEvent, type SimEventKind } from "../../../../twin-kit/scenario.ts";
import type { Twin } from "../../../../twin-kit/twin.ts";
import { eventsWithActions, handleAction } from "./twin-actions.ts";

const RENDER: Record<SimEventKind, { type: string; scan: string; code: string; text: string }> = {
  manifested: { type: "UD", scan: "Manifested", code: "X-UCI", text: "Shipment details manifested" },
  picked_up: { type: "UD", scan: "In Transit", code: "X-PPOM", text: "Shipment picked up" },
  in_transit: { type: "UD", scan: "In Transit", code: "X-ILL1F", text: "Bag Received at Facility" },
  reached_destination: { type: "UD", scan: "Pending", code: "X-IBD3F", text: "Shipment Received at Facility" },
  out_for_delivery: { type: "UD", scan: "Dispatched", code: "X-DDD3FD", text: "Out for delivery" },
  delivered: { type: "DL", scan: "Delivered", code: "EOD-38", text: "Delivered to consignee" },
  delivery_failed: { type: "UD", scan: "Pending", code: "EOD-11", text: "Consignee Unavailable" },
  rto_initiated: { type: "RT", scan: "In Transit", code: "RT-101", text: "Returned as per Client Instructions" },
  returned: { type: "DL", scan: "RTO", code: "RT-110", text: "RTO delivered to shipper" },
  cancelled: { type: "CN", scan: "Canceled", code: "CN-101", text: "Shipment cancelled by client" },
};

/** State of each simulator city, as Delhivery writes facility names: `City_Facility_X (State)`. */
const STATE: Record<string, string> = {
  Mumbai: "Maharashtra",
  Pune: "Maharashtra",
  Delhi: "Delhi",
  Bengaluru: "Karnataka",
  Chennai: "Tamil Nadu",
  Kolkata: "West Bengal",
  Hyderabad: "Telangana",
  Ahmedabad: "Gujarat",
  Jaipur: "Rajasthan",
  Lucknow: "Uttar Pradesh",
  Kochi: "Kerala",
  Indore: "Madhya Pradesh",
};
const facility = (city: string) => `${city}_Hub_H (${STATE[city] ?? "India"})`;

/**
 * The failed attempt's NSL code per reason family (README.md, "Sandbox couriers"; the codes: reasons.ts and
 * README.md, "Failed attempts"); Instructions carry the scenario's remark, as Delhivery's carry its own words.
 */
const FAILED: Readonly<Record<number, { type: string; scan: string; code: string }>> = {
  20: { type: "UD", scan: "Pending", code: "EOD-11" },
  21: { type: "UD", scan: "Pending", code: "EOD-6" },
  22: { type: "UD", scan: "Pending", code: "EOD-74" },
  23: { type: "UD", scan: "Pending", code: "EOD-16" },
  24: { type: "UD", scan: "Pending", code: "EOD-3" },
  25: { type: "UD", scan: "Pending", code: "DLYDC-107" },
  26: { type: "UD", scan: "Pending", code: "DLYDC-132" },
  27: { type: "UD", scan: "Pending", code: "RT-104" },
  28: { type: "LT", scan: "Lost", code: "LT-100" },
  29: { type: "UD", scan: "Pending", code: "DLYDC-101" },
  30: { type: "UD", scan: "Pending", code: "DLYRPC-416" },
};

const renderOf = (e: SimEvent) =>
  (e.kind === "delivery_failed" && FAILED[failedAttemptFamily(e.remark) ?? 20]) || RENDER[e.kind];

const ist = (ms: number) => {
  const w = wallTime(ms, 330);
  return `${w.date}T${w.time}.000`;
};

function scanOf(e: SimEvent): Required<DelhiveryScan> {
  const r = renderOf(e);
  const place = facility(e.location);
  return {
    ScanDateTime: ist(e.at),
    ScanType: r.type,
    Scan: r.scan,
    StatusDateTime: ist(e.at),
    ScannedLocation: place,
    StatusCode: r.code,
    Instructions: e.remark ?? RENDER[e.kind].text,
  };
}

const json = (body: DelhiveryResponse) => Response.json(body);

export const delhiveryTwin: Twin = {
  id: "delhivery",
  async handle(req, url, sim) {
    if (req.headers.get("authorization") !== `Token ${sandboxCredential("DELHIVERY_TOKEN")}`)
      return Response.json({ detail: "Authentication credentials were not provided." }, { status: 401 });
    const acted = await handleAction(req, url, sim, scanOf);
    if (acted) return acted;
    if (!url.pathname.endsWith("/api/v1/packages/json/")) return new Response("Not Found", { status: 404 });
    const awb = (url.searchParams.get("waybill") ?? "").split(",")[0] ?? "";
    sim.count("delhivery", awb);
    const gated = await sim.gate(awb);
    if (gated) return gated;
    const s = sim.scenario(awb);
    if (s.kind !== "found")
      return json({
        rmk: "Some error has occurred. Please contact client.support@delhivery.com with error message- No such waybill or Order Id found",
        Success: false,
        Error: "No such waybill or Order Id found",
      });
    const events = eventsWithActions(awb, s, sim);
    const scans = s.noScans ? [] : events.map((e) => ({ ScanDetail: scanOf(e) }));
    const last = events.at(-1);
    if (!last) throw new Error("scenario without a visible event");
    const ls = scanOf(last);
    return json({
      ShipmentData: [
        {
          Shipment: {
            AWB: awb,
            Origin: facility(s.origin),
            Destination: s.destination,
            Consignee: { City: s.destination, Name: "Sandbox Consignee", Country: "India" },
            Scans: scans,
            ExpectedDeliveryDate: s.edd ? `${s.edd}T23:59:59` : null,
            PromisedDeliveryDate: s.edd ? `${s.edd}T23:59:59` : null,
            Status: {
              Status: ls.Scan,
              StatusLocation: ls.ScannedLocation,
              StatusDateTime: ls.StatusDateTime,
              RecievedBy: "",
              StatusCode: ls.StatusCode,
              StatusType: ls.ScanType,
              Instructions: ls.Instructions,
            },
          },
        },
      ],
    });
  },
};
