/** DHL Unified twin: answers shaped like fixtures/unified-track.json and its RFC 7807 404. */
import { sandboxCredential } from "../../../../twin-kit/credentials.ts";
import type { DhlEvent, DhlProblem, DhlTrackResponse } from "./wire.ts";
import {
  latest,
  failedAttemptFamily,
  wallTime,
  type SimEvent,
  type SimEventKind,
} from "../../../../twin-kit/scenario.ts";
import type { Twin } from "../../../../twin-kit/twin.ts";

/** Families that are not a delivery attempt (README.md, "Sandbox couriers"): DHL's status for each. */
const NOT_ATTEMPT: Readonly<Record<number, string>> = {
  27: "Shipment damaged",
  28: "Shipment lost",
  30: "Shipment on hold",
};

/**
 * A failure event in the scenario's words: DHL documents no reason codes, only `statusCode` `failure` and a
 * description (README.md), so the description names the reason family, never one fixed reason.
 */
function failureOf(remark: string | null): { code: string; status: string; description: string } {
  const text = remark ?? "Consignee not available";
  const other = NOT_ATTEMPT[failedAttemptFamily(text) ?? 20];
  if (other) return { code: "failure", status: other, description: text };
  return { code: "failure", status: "Delivery attempted", description: `Delivery attempt failed; ${text}` };
}

const RENDER: Record<SimEventKind, { code: string; status: string; description: string }> = {
  manifested: {
    code: "pre-transit",
    status: "Shipment information received",
    description: "Shipment information received",
  },
  picked_up: { code: "transit", status: "Shipment picked up", description: "Shipment picked up" },
  in_transit: { code: "transit", status: "Processed at DHL facility", description: "Processed at DHL facility" },
  reached_destination: {
    code: "transit",
    status: "Arrived at Delivery Facility",
    description: "Arrived at DHL Delivery Facility",
  },
  out_for_delivery: {
    code: "transit",
    status: "Shipment is out with courier for delivery",
    description: "Shipment is out with courier for delivery",
  },
  delivered: { code: "delivered", status: "Delivered", description: "Delivered - Signed for by: SANDBOX" },
  delivery_failed: failureOf(null),
  rto_initiated: {
    code: "transit",
    status: "Shipment is being returned to shipper",
    description: "Shipment is being returned to shipper",
  },
  returned: { code: "delivered", status: "Returned to shipper", description: "Shipment returned to shipper" },
  cancelled: { code: "failure", status: "Shipment cancelled", description: "Shipment cancelled by shipper" },
};

const address = (city: string) => ({
  address: { countryCode: "IN", postalCode: "", addressLocality: city.toUpperCase() },
});

function eventOf(e: SimEvent): DhlEvent & { timestamp: string } {
  const r = e.kind === "delivery_failed" ? failureOf(e.remark) : RENDER[e.kind];
  return {
    timestamp: wallTime(e.at, 330).iso,
    location: address(e.location),
    statusCode: r.code,
    status: r.status,
    description: r.description,
    ...(e.remark ? { remark: e.remark } : {}),
  };
}

const problem = (status: number, title: string, detail: string, instance: string) =>
  new Response(JSON.stringify({ title, detail, status, instance } satisfies DhlProblem), {
    status,
    headers: { "content-type": "application/problem+json" },
  });

export const dhlTwin: Twin = {
  id: "dhl",
  async handle(req, url, sim) {
    if (req.headers.get("dhl-api-key") !== sandboxCredential("DHL_API_KEY"))
      return problem(401, "Unauthorized", "Invalid API key.", url.pathname);
    if (req.method !== "GET" || !url.pathname.endsWith("/track/shipments"))
      return problem(404, "Not Found", "No such resource.", url.pathname);
    const awb = url.searchParams.get("trackingNumber") ?? "";
    sim.count("dhl", awb);
    const gated = await sim.gate(awb);
    if (gated) return gated;
    const s = sim.scenario(awb);
    if (s.kind !== "found")
      return problem(404, "No result found", "No shipment with given tracking number found.", `/shipment/${awb}`);
    const events = s.noScans ? [] : s.events.map(eventOf).reverse(); // DHL lists the newest event first
    const last = eventOf(latest(s));
    const delivered = s.events.some((e) => e.kind === "delivered");
    // DHL's estimate until delivery (dropped afterwards), as in the fixture: a time, its window and remark.
    const estimate =
      s.edd && !delivered
        ? {
            estimatedTimeOfDelivery: `${s.edd}T18:00:00+05:30`,
            estimatedDeliveryTimeFrame: {
              estimatedFrom: `${s.edd}T09:00:00+05:30`,
              estimatedThrough: `${s.edd}T18:00:00+05:30`,
            },
            estimatedTimeOfDeliveryRemark: "By End of Day",
          }
        : {};
    const body: DhlTrackResponse = {
      url: `/shipments?trackingNumber=${awb}?offset=0&limit=5`,
      shipments: [
        {
          id: awb,
          service: "express",
          origin: address(s.origin),
          destination: address(s.destination),
          status: last,
          ...estimate,
          details: {
            carrier: { "@type": "Organization", organizationName: "EXPRESS" },
            product: { productName: "EXPRESS WORLDWIDE" },
            ...(delivered && s.podUrl
              ? {
                  proofOfDelivery: {
                    timestamp: last.timestamp,
                    documentUrl: s.podUrl,
                    signed: { "@type": "Person", name: "SANDBOX" },
                  },
                }
              : {}),
            totalNumberOfPieces: 1,
            pieceIds: [`JD0146000${awb.padStart(11, "0").slice(-11)}`],
          },
          events,
        },
      ],
    };
    return Response.json(body);
  },
};
