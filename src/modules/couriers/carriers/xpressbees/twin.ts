/** Xpressbees twin: login for a token, then track with the raw codes of the Shiprocket fixture. */
import { sandboxCredential } from "../../../../twin-kit/credentials.ts";
import type { XpressbeesEvent, XpressbeesLoginResponse, XpressbeesTrackResponse } from "./wire.ts";
import { latest, wallTime, type SimEvent, type SimEventKind } from "../../../../twin-kit/scenario.ts";
import type { Twin } from "../../../../twin-kit/twin.ts";
import { issuedTokens } from "../../../../twin-kit/tokens.ts";

/** Sandbox token lifetime (the real one is undocumented). */
const TOKEN_TTL_MS = 24 * 3_600_000;

const RENDER: Record<SimEventKind, { code: string; message: string; status: string }> = {
  manifested: { code: "DRC", message: "Pending Manifest Data Received", status: "data received" },
  picked_up: { code: "PUD", message: "PickDone", status: "in transit" },
  in_transit: { code: "IT", message: "InTransit Shipment added in Bag", status: "in transit" },
  reached_destination: {
    code: "RAD",
    message: "Reached at Destination Shipment BagOut From Bag",
    status: "in transit",
  },
  out_for_delivery: { code: "OFD", message: "Out for Delivery", status: "out for delivery" },
  delivered: { code: "DLVD", message: "Delivered", status: "delivered" },
  delivery_failed: { code: "UD", message: "Undelivered", status: "exception" },
  rto_initiated: { code: "RTO", message: "RTO Initiated", status: "rto" },
  returned: { code: "RTO-DLVD", message: "RTO Delivered to shipper", status: "rto delivered" },
  cancelled: { code: "CAN", message: "Shipment Cancelled", status: "cancelled" },
};

function historyItem(e: SimEvent): XpressbeesEvent {
  const r = RENDER[e.kind];
  const w = wallTime(e.at, 330);
  const up = e.location.toUpperCase();
  return {
    status_code: r.code,
    location: `${up.slice(0, 3)}/FC1, ${up}`,
    event_time: `${w.date} ${w.time.slice(0, 5)}`,
    message: e.remark ? `${r.message}: ${e.remark}` : r.message,
  };
}

const unauthorized = () => Response.json({ status: false, message: "Unauthorized" }, { status: 401 });

const track = (body: XpressbeesTrackResponse) => Response.json(body);

export const xpressbeesTwin: Twin = {
  id: "xpressbees",
  async handle(req, url, sim) {
    if (url.pathname.endsWith("/api/users/login")) {
      if (req.method !== "POST")
        return Response.json({ status: false, message: "Method not allowed" }, { status: 405 });
      sim.count("xpressbees-token", "*");
      const body = (await req.json().catch(() => ({}))) as { email?: unknown; password?: unknown };
      if (
        body.email !== sandboxCredential("XPRESSBEES_EMAIL") ||
        body.password !== sandboxCredential("XPRESSBEES_PASSWORD")
      )
        return Response.json({ status: false, message: "Invalid email or password" } satisfies XpressbeesLoginResponse);
      const token = `sbx.${crypto.randomUUID().replace(/-/g, "")}`;
      issuedTokens(sim, "xpressbees").set(token, sim.now());
      return Response.json({ status: true, data: token } satisfies XpressbeesLoginResponse);
    }
    const m = /\/api\/shipments2\/track\/([^/]+)$/.exec(url.pathname);
    if (!m || req.method !== "GET") return Response.json({ status: false, message: "Not Found" }, { status: 404 });
    const auth = req.headers.get("authorization") ?? "";
    const issued = auth.startsWith("Bearer ") ? issuedTokens(sim, "xpressbees").get(auth.slice(7)) : undefined;
    if (issued === undefined || sim.now() - issued > TOKEN_TTL_MS) return unauthorized();
    const awb = decodeURIComponent(m[1] ?? "");
    sim.count("xpressbees", awb);
    const gated = await sim.gate(awb);
    if (gated) return gated;
    const s = sim.scenario(awb);
    if (s.kind !== "found") return track({ status: false, message: "No data found" });
    const last = latest(s);
    return track({
      status: true,
      data: {
        awb_number: awb,
        status: RENDER[last.kind].status,
        origin: s.origin,
        destination: s.destination,
        history: s.noScans ? [] : [...s.events].reverse().map(historyItem),
      },
    });
  },
};
