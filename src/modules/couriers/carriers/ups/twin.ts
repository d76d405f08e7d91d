/** UPS Track API twin: OAuth token, then answers shaped like fixtures/track.json. */
import { sandboxCredential } from "../../../../twin-kit/credentials.ts";
import type { UpsActivity, UpsPackage, UpsStatus, UpsTrackResponse } from "./wire.ts";
import {
  failedAttemptFamily,
  latest,
  wallTime,
  type Scenario,
  type SimEvent,
  type SimEventKind,
} from "../../../../twin-kit/scenario.ts";
import type { SimContext, Twin } from "../../../../twin-kit/twin.ts";
import { issuedTokens } from "../../../../twin-kit/tokens.ts";

/** Token lifetime the twin announces, seconds (UPS sends it as a string). */
export const UPS_TOKEN_SECONDS = 14399;
/** A 1×1 GIF: what the twin sends as the delivery photo. */
export const UPS_SANDBOX_PHOTO = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";

const RENDER: Record<SimEventKind, { type: string; code: string; statusCode: string; description: string }> = {
  manifested: {
    type: "M",
    code: "MP",
    statusCode: "003",
    description: "Shipper created a label, UPS has not received the package yet. ",
  },
  picked_up: { type: "P", code: "PU", statusCode: "038", description: "Pickup Scan " },
  in_transit: { type: "I", code: "DP", statusCode: "005", description: "Departed from Facility" },
  reached_destination: { type: "I", code: "AR", statusCode: "005", description: "Arrived at Facility" },
  out_for_delivery: { type: "I", code: "OT", statusCode: "021", description: "Out For Delivery Today" },
  delivered: { type: "D", code: "F4", statusCode: "011", description: "DELIVERED " },
  delivery_failed: {
    type: "X",
    code: "48",
    statusCode: "048",
    description: "Delivery attempt failed. The receiver was not available for delivery.",
  },
  rto_initiated: { type: "X", code: "RS", statusCode: "067", description: "Returning package to the sender." },
  returned: { type: "D", code: "FS", statusCode: "011", description: "Returned to the sender." },
  cancelled: { type: "MV", code: "MV", statusCode: "007", description: "Shipment label voided by the shipper." },
};

/**
 * A failed attempt's description in the scenario's words (README.md, "Sandbox couriers"): UPS carries the reason only
 * in the description of activity type X, so each family is worded, never one fixed reason. Family 20 keeps UPS's
 * own sentence; 27, 28 and 30 are not delivery attempts.
 */
function failedDescription(remark: string | null): string {
  const family = failedAttemptFamily(remark) ?? 20;
  if (family === 20) return RENDER.delivery_failed.description;
  return family === 27 || family === 28 || family === 30 ? `${remark}.` : `Delivery attempt failed. ${remark}.`;
}

function statusOf(e: SimEvent): Required<Omit<UpsStatus, "simplifiedTextDescription">> & { description: string } {
  const r =
    e.kind === "delivery_failed"
      ? { ...RENDER.delivery_failed, description: failedDescription(e.remark) }
      : RENDER[e.kind];
  return { type: r.type, description: r.description, code: r.code, statusCode: r.statusCode };
}

function activityOf(e: SimEvent): UpsActivity & { date: string; time: string } {
  const w = wallTime(e.at, 0);
  const p = (n: number) => String(n).padStart(2, "0");
  return {
    location: { address: { city: e.location.toUpperCase(), countryCode: "IN", country: "IN" } },
    status: statusOf(e),
    date: `${w.y}${p(w.mo)}${p(w.d)}`,
    time: `${p(w.h)}${p(w.mi)}${p(w.s)}`,
  };
}

const answer = (body: UpsTrackResponse, status = 200) => Response.json(body, { status });
const upsError = (status: number, code: string, message: string) =>
  answer({ response: { errors: [{ code, message }] } }, status);

/** The one package of a found shipment, as the Track API shows it. */
function packageOf(awb: string, s: Extract<Scenario, { kind: "found" }>): UpsPackage {
  const last = latest(s);
  const delivered = s.events.some((e) => e.kind === "delivered");
  const lastWall = activityOf(last);
  return {
    trackingNumber: awb,
    ...(delivered
      ? { deliveryDate: [{ type: "DEL", date: lastWall.date }], deliveryTime: { type: "DEL", endTime: lastWall.time } }
      : {}),
    ...(!delivered && s.edd
      ? {
          deliveryDate: [{ type: "SDD", date: s.edd.replace(/-/g, "") }],
          deliveryTime: { type: "EOD", endTime: "235900" },
        }
      : {}),
    ...(delivered && s.podUrl
      ? {
          deliveryInformation: {
            location: "Front Door",
            receivedBy: "SANDBOX",
            deliveryPhoto: { isNonPostalCodeCountry: false, photo: UPS_SANDBOX_PHOTO, photoCaptureInd: "Y" },
          },
        }
      : {}),
    currentStatus: { ...statusOf(last), simplifiedTextDescription: statusOf(last).description.trim() },
    packageAddress: [
      { type: "ORIGIN", address: { city: s.origin.toUpperCase(), countryCode: "IN", country: "IN" } },
      { type: "DESTINATION", address: { city: s.destination.toUpperCase(), countryCode: "IN", country: "IN" } },
    ],
    activity: s.noScans ? [] : s.events.map(activityOf).reverse(),
    packageCount: 1,
  };
}

/** The OAuth client-credentials grant: Basic auth with the sandbox client id and secret. */
async function tokenAnswer(req: Request, sim: SimContext): Promise<Response> {
  sim.count("ups", "oauth/token");
  const expected = `Basic ${Buffer.from(`${sandboxCredential("UPS_CLIENT_ID")}:${sandboxCredential("UPS_CLIENT_SECRET")}`).toString("base64")}`;
  const form = new URLSearchParams(await req.text());
  if (req.headers.get("authorization") !== expected) return upsError(401, "10401", "ClientId is Invalid");
  if (form.get("grant_type") !== "client_credentials") return upsError(400, "10400", "Invalid/Missing grant_type");
  const token = `ups-${crypto.randomUUID()}`;
  issuedTokens(sim, "ups").set(token, sim.now() + UPS_TOKEN_SECONDS * 1000);
  return Response.json({
    token_type: "Bearer",
    issued_at: String(sim.now()),
    client_id: sandboxCredential("UPS_CLIENT_ID"),
    access_token: token,
    expires_in: String(UPS_TOKEN_SECONDS),
    status: "approved",
  });
}

export const upsTwin: Twin = {
  id: "ups",
  async handle(req, url, sim) {
    if (req.method === "POST" && url.pathname.endsWith("/security/v1/oauth/token")) return tokenAnswer(req, sim);
    const m = /\/api\/track\/v1\/details\/([^/]+)$/.exec(url.pathname);
    if (req.method !== "GET" || !m) return upsError(404, "404", "Resource not found");
    const bearer = /^Bearer (.+)$/i.exec(req.headers.get("authorization") ?? "")?.[1] ?? "";
    const expiry = issuedTokens(sim, "ups").get(bearer);
    if (expiry === undefined || expiry <= sim.now())
      return upsError(401, "250002", "Invalid Authentication Information.");
    if (!req.headers.get("transid") || !req.headers.get("transactionsrc"))
      return upsError(400, "VSS000", "Missing transId or transactionSrc header");
    const awb = decodeURIComponent(m[1] ?? "");
    sim.count("ups", awb);
    const gated = await sim.gate(awb);
    if (gated) return gated;
    const s = sim.scenario(awb);
    if (s.kind !== "found")
      return answer({
        trackResponse: { shipment: [{ warnings: [{ code: "TW0001", message: "Tracking Information Not Found" }] }] },
      });
    return answer({
      trackResponse: {
        shipment: [
          {
            inquiryNumber: awb,
            package: [packageOf(awb, s)],
          },
        ],
      },
    });
  },
};
