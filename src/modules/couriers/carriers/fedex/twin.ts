/** FedEx Track API twin: OAuth token, then answers shaped like fixtures/track-delivered.json. */
import { sandboxCredential } from "../../../../twin-kit/credentials.ts";
import type { FedexAddress, FedexScanEvent, FedexTrackResponse, FedexTrackResult } from "./wire.ts";
import { latest, wallTime, type Scenario, type SimEvent, type SimEventKind } from "../../../../twin-kit/scenario.ts";
import type { Twin } from "../../../../twin-kit/twin.ts";
import { issuedTokens } from "../../../../twin-kit/tokens.ts";

/** Token lifetime the twin announces, seconds (FedEx: about an hour). */
export const FEDEX_TOKEN_SECONDS = 3599;

const RENDER: Record<
  SimEventKind,
  { type: string; derived: string; derivedText: string; text: string; exceptionCode?: string; locationType: string }
> = {
  manifested: {
    type: "OC",
    derived: "IN",
    derivedText: "Label created",
    text: "Shipment information sent to FedEx",
    locationType: "CUSTOMER",
  },
  picked_up: {
    type: "PU",
    derived: "PU",
    derivedText: "Picked up",
    text: "Picked up",
    locationType: "PICKUP_LOCATION",
  },
  in_transit: {
    type: "DP",
    derived: "IT",
    derivedText: "In transit",
    text: "Departed FedEx location",
    locationType: "FEDEX_FACILITY",
  },
  reached_destination: {
    type: "AR",
    derived: "IT",
    derivedText: "In transit",
    text: "At local FedEx facility",
    locationType: "DESTINATION_FEDEX_FACILITY",
  },
  out_for_delivery: {
    type: "OD",
    derived: "IT",
    derivedText: "In transit",
    text: "On FedEx vehicle for delivery",
    locationType: "VEHICLE",
  },
  delivered: {
    type: "DL",
    derived: "DL",
    derivedText: "Delivered",
    text: "Delivered",
    locationType: "DELIVERY_LOCATION",
  },
  delivery_failed: {
    type: "DE",
    derived: "DE",
    derivedText: "Delivery exception",
    text: "Delivery exception",
    exceptionCode: "08",
    locationType: "DELIVERY_LOCATION",
  },
  rto_initiated: {
    type: "RS",
    derived: "RS",
    derivedText: "Return to shipper",
    text: "Returning package to shipper",
    exceptionCode: "A12",
    locationType: "DESTINATION_FEDEX_FACILITY",
  },
  returned: {
    type: "DL",
    derived: "DL",
    derivedText: "Delivered",
    text: "Delivered - returned to shipper",
    locationType: "DELIVERY_LOCATION",
  },
  cancelled: {
    type: "CA",
    derived: "CA",
    derivedText: "Cancelled",
    text: "Shipment cancelled by sender",
    locationType: "CUSTOMER",
  },
};

const address = (city: string): FedexAddress & { city: string } => ({
  city: city.toUpperCase(),
  countryCode: "IN",
  residential: false,
  countryName: "India",
});

function scanOf(e: SimEvent): Required<Omit<FedexScanEvent, "scanLocation">> & Pick<FedexScanEvent, "scanLocation"> {
  const r = RENDER[e.kind];
  return {
    date: wallTime(e.at, 330).iso,
    eventType: r.type,
    eventDescription: r.text,
    exceptionCode: r.exceptionCode ?? "",
    exceptionDescription: e.remark ?? "",
    scanLocation: { streetLines: [""], ...address(e.location) },
    locationType: r.locationType,
    derivedStatusCode: r.derived,
    derivedStatus: r.derivedText,
  };
}

function trackResult(awb: string, s: Extract<Scenario, { kind: "found" }>): FedexTrackResult {
  const last = scanOf(latest(s));
  const delivered = s.events.some((e) => e.kind === "delivered");
  const estimate = s.edd && !delivered ? s.edd : null;
  return {
    trackingNumberInfo: { trackingNumber: awb, trackingNumberUniqueId: `12028~${awb}~FDEG`, carrierCode: "FDXE" },
    additionalTrackingInfo: { nickname: "", hasAssociatedShipments: false },
    shipperInformation: { contact: {}, address: address(s.origin) },
    recipientInformation: { contact: {}, address: address(s.destination) },
    latestStatusDetail: {
      code: last.eventType,
      derivedCode: last.derivedStatusCode,
      statusByLocale: last.derivedStatus,
      description: last.eventDescription,
      scanLocation: last.scanLocation,
    },
    dateAndTimes: delivered
      ? [{ type: "ACTUAL_DELIVERY", dateTime: last.date }]
      : estimate
        ? [{ type: "ESTIMATED_DELIVERY", dateTime: `${estimate}T18:00:00+05:30` }]
        : [],
    estimatedDeliveryTimeWindow: estimate
      ? {
          type: "ESTIMATED_DELIVERY",
          window: { begins: `${estimate}T09:00:00+05:30`, ends: `${estimate}T18:00:00+05:30` },
        }
      : { window: {} },
    standardTransitTimeWindow: { window: s.edd ? { ends: `${s.edd}T23:59:00+05:30` } : {} },
    availableImages: delivered ? [{ type: "SIGNATURE_PROOF_OF_DELIVERY" }] : [],
    scanEvents: s.noScans ? [] : s.events.map(scanOf).reverse(),
    originLocation: { locationContactAndAddress: { address: address(s.origin) } },
    lastUpdatedDestinationAddress: address(s.destination),
    serviceDetail: {
      type: "INTERNATIONAL_PRIORITY",
      description: "FedEx International Priority",
      shortDescription: "IP",
    },
    returnDetail: s.events.some((e) => e.kind === "returned")
      ? { reasonDetail: [{ description: "Return to shipper", type: "RETURN" }] }
      : {},
  };
}

const answer = (body: FedexTrackResponse, status = 200) => Response.json(body, { status });
const fedexError = (status: number, code: string, message: string) =>
  answer({ transactionId: crypto.randomUUID(), errors: [{ code, message }] }, status);

export const fedexTwin: Twin = {
  id: "fedex",
  async handle(req, url, sim) {
    if (req.method === "POST" && url.pathname.endsWith("/oauth/token")) {
      sim.count("fedex", "oauth/token");
      const form = new URLSearchParams(await req.text());
      if (
        form.get("grant_type") !== "client_credentials" ||
        form.get("client_id") !== sandboxCredential("FEDEX_CLIENT_ID") ||
        form.get("client_secret") !== sandboxCredential("FEDEX_CLIENT_SECRET")
      )
        return fedexError(
          401,
          "NOT.AUTHORIZED.ERROR",
          "The given client credentials were not valid. Please modify your request and try again.",
        );
      const token = `fx-${crypto.randomUUID()}`;
      issuedTokens(sim, "fedex").set(token, sim.now() + FEDEX_TOKEN_SECONDS * 1000);
      return Response.json({
        access_token: token,
        token_type: "bearer",
        expires_in: FEDEX_TOKEN_SECONDS,
        scope: "CXS-TP",
      });
    }
    if (req.method !== "POST" || !url.pathname.endsWith("/track/v1/trackingnumbers"))
      return fedexError(404, "NOT.FOUND.ERROR", "The resource you requested is no longer available.");
    const bearer = /^Bearer (.+)$/i.exec(req.headers.get("authorization") ?? "")?.[1] ?? "";
    const expiry = issuedTokens(sim, "fedex").get(bearer);
    if (expiry === undefined || expiry <= sim.now())
      return fedexError(
        401,
        "NOT.AUTHORIZED.ERROR",
        "The given JWT is invalid. Please modify your request and try again.",
      );
    let body: {
      trackingInfo?: { trackingNumberInfo?: { trackingNumber?: unknown } }[];
      includeDetailedScans?: unknown;
    };
    try {
      body = (await req.json()) as typeof body;
    } catch {
      return fedexError(400, "INVALID.INPUT.EXCEPTION", "Invalid field value in the input");
    }
    const numbers = (body.trackingInfo ?? [])
      .map((t) => String(t?.trackingNumberInfo?.trackingNumber ?? ""))
      .filter(Boolean);
    const first = numbers[0];
    if (first === undefined) return fedexError(400, "TRACKING.TRACKINGNUMBER.EMPTY", "Please provide tracking number.");
    for (const n of numbers) sim.count("fedex", n);
    const gated = await sim.gate(first);
    if (gated) return gated;
    const completeTrackResults = numbers.map((awb): { trackingNumber: string; trackResults: FedexTrackResult[] } => {
      const s = sim.scenario(awb);
      if (s.kind !== "found")
        return {
          trackingNumber: awb,
          trackResults: [
            {
              trackingNumberInfo: { trackingNumber: awb, trackingNumberUniqueId: "", carrierCode: "" },
              error: {
                code: "TRACKING.TRACKINGNUMBER.NOTFOUND",
                message: "Tracking number cannot be found. Please correct the tracking number and try again.",
              },
            },
          ],
        };
      return { trackingNumber: awb, trackResults: [trackResult(awb, s)] };
    });
    return answer({ transactionId: crypto.randomUUID(), output: { completeTrackResults } });
  },
};
