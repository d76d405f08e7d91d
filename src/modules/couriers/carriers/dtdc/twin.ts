/** DTDC twin: a token from `authenticate`, answers shaped like fixtures/jsoncntrk*.json. */
import { sandboxCredential } from "../../../../twin-kit/credentials.ts";
import type { DtdcDetail, DtdcTrackResponse, DtdcUnauthorized } from "./wire.ts";
import { firstEvent, latest, wallTime, type SimEvent, type SimEventKind } from "../../../../twin-kit/scenario.ts";
import type { Twin } from "../../../../twin-kit/twin.ts";
import { issuedTokens } from "../../../../twin-kit/tokens.ts";

/** Sandbox token lifetime (the real one is undocumented). */
const TOKEN_TTL_MS = 24 * 3_600_000;

const RENDER: Record<SimEventKind, { code: string; action: string }> = {
  manifested: { code: "BKD", action: "Booked" },
  picked_up: { code: "OBMD", action: "In Transit" },
  in_transit: { code: "CDOUT", action: "In Transit" },
  reached_destination: { code: "IBMD", action: "In Transit" },
  out_for_delivery: { code: "OUTDLV", action: "Out For Delivery" },
  delivered: { code: "DLV", action: "Delivered" },
  delivery_failed: { code: "NONDLV", action: "Not Delivered" },
  rto_initiated: { code: "RTO", action: "RTO In Transit" },
  returned: { code: "RTODLV", action: "RTO Delivered" },
  cancelled: { code: "CAN", action: "Cancelled" },
};

const p2 = (n: number) => String(n).padStart(2, "0");
function ist(ms: number) {
  const w = wallTime(ms, 330);
  return { date: `${p2(w.d)}${p2(w.mo)}${w.y}`, hhmm: `${p2(w.h)}${p2(w.mi)}` };
}

const unauthorized = (path: string) =>
  Response.json(
    {
      timestamp: new Date().toISOString(),
      status: 401,
      error: "Unauthorized",
      message: "Unauthorized: Authentication token was either missing or invalid.",
      path,
    } satisfies DtdcUnauthorized,
    { status: 401 },
  );

function detail(e: SimEvent, prev: SimEvent | undefined): DtdcDetail {
  const r = RENDER[e.kind];
  const t = ist(e.at);
  return {
    strCode: r.code,
    strAction: r.action,
    strManifestNo: "",
    strOrigin: `${e.location.toUpperCase()} APEX`,
    strDestination: prev && prev.location !== e.location ? `${prev.location.toUpperCase()} APEX` : "",
    strActionDate: t.date,
    strActionTime: t.hhmm,
    sTrRemarks: e.remark ?? (e.kind === "delivered" ? "SIGN" : ""),
  };
}

const answer = (body: DtdcTrackResponse) => Response.json(body);

export const dtdcTwin: Twin = {
  id: "dtdc",
  async handle(req, url, sim) {
    if (req.method === "GET" && url.pathname.endsWith("/api/dtdc/authenticate")) {
      sim.count("dtdc-token", "*");
      if (
        url.searchParams.get("username") !== sandboxCredential("DTDC_USERNAME") ||
        url.searchParams.get("password") !== sandboxCredential("DTDC_PASSWORD")
      )
        return unauthorized(url.pathname);
      const token = `sbx${crypto.randomUUID().replace(/-/g, "")}`;
      issuedTokens(sim, "dtdc").set(token, sim.now());
      return new Response(token, { headers: { "content-type": "text/plain" } });
    }
    if (!url.pathname.endsWith("/rest/JSONCnTrk/getTrackDetails")) return new Response("Not Found", { status: 404 });
    if (req.method !== "POST") return Response.json({ status: 405, error: "Method Not Allowed" }, { status: 405 });
    const issued = issuedTokens(sim, "dtdc").get(req.headers.get("x-access-token") ?? "");
    if (issued === undefined || sim.now() - issued > TOKEN_TTL_MS) return unauthorized(url.pathname);
    let body: { trkType?: unknown; strcnno?: unknown; addtnlDtl?: unknown };
    try {
      body = (await req.json()) as typeof body;
    } catch {
      return Response.json({ status: 400, error: "Bad Request", message: "JSON parse error" }, { status: 400 });
    }
    const awb = typeof body.strcnno === "string" ? body.strcnno : "";
    if (body.trkType !== "cnno" || !awb)
      return answer({ statusCode: 200, statusFlag: false, status: "FAILED", errorDetails: "INVALID REQUEST" });
    sim.count("dtdc", awb);
    const gated = await sim.gate(awb);
    if (gated) return gated;
    const s = sim.scenario(awb);
    if (s.kind !== "found")
      return answer({
        statusCode: 200,
        statusFlag: false,
        status: "FAILED",
        errorDetails: "NO DATA FOUND FOR THIS CNNO NUMBER",
      });
    const last = latest(s);
    const first = ist(firstEvent(s).at);
    const lt = ist(last.at);
    const rto = s.events.some((e) => e.kind === "rto_initiated");
    return answer({
      statusCode: 200,
      statusFlag: true,
      status: "SUCCESS",
      errorDetails: null,
      trackHeader: {
        strShipmentNo: awb,
        strRefNo: "",
        strCNType: "CP",
        strCNProduct: "LITE",
        strOrigin: s.origin.toUpperCase(),
        strOriginRemarks: "Booked By",
        strBookedDate: first.date,
        strBookedTime: `${first.hhmm.slice(0, 2)}:${first.hhmm.slice(2)}:00`,
        strPieces: "1",
        strWeightUnit: "KG",
        strWeight: "0.5000",
        strDestination: s.destination.toUpperCase(),
        strStatus: RENDER[last.kind].action,
        strStatusTransOn: lt.date,
        strStatusTransTime: lt.hhmm,
        strRemarks: last.remark ?? (last.kind === "delivered" ? "SIGN" : ""),
        strNoOfAttempts: String(s.events.filter((e) => e.kind === "delivered" || e.kind === "delivery_failed").length),
        strRtoNumber: rto ? `R${awb.slice(-8)}` : "",
      },
      trackDetails: s.noScans ? [] : s.events.map((e, i) => detail(e, s.events[i - 1])),
    });
  },
};
