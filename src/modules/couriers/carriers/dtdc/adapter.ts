/** DTDC JSONCnTrk with a token from `authenticate` (fixtures/SOURCE.md); details: README.md here. */
import {
  checkWire,
  validItems,
  checkpoint,
  checkpointsOf,
  newestOf,
  parseJson,
  str,
  summary,
  throwForStatus,
} from "../../adapters/kit.ts";
import { byKeyword, sub, D, E, O, P, R, T, type StatusRule, type StatusTable } from "../../adapters/status-map.ts";
import { parseNaive } from "../../adapters/time.ts";
import { CourierError, type AdapterContext, type CourierAdapter } from "../../adapters/types.ts";
import type { RawCheckpoint, TrackingSnapshot } from "../../../../domain/checkpoint.ts";
import { accountKey, TokenCache } from "../../adapters/token-cache.ts";
import { DtdcDetail, DtdcTrackResponse, type DtdcHeader } from "./wire.ts";

/** `strCode` → state (`fixtures/SOURCE.md`, "Mapping"). Edit here when DTDC's code list is confirmed. */
const DTDC_STATUS: StatusTable = {
  BKD: sub(P, "info_received"),
  OBMD: T,
  IBMD: T,
  OPMF: T,
  IPMF: T,
  CDOUT: T,
  CDIN: T,
  OUTDLV: O,
  DLV: D,
  NONDLV: sub(E, "delivery_attempt_failed"),
};

/** Status/action texts (header `strStatus`, legacy `strAction`), upper-cased. */
const DTDC_TEXT: StatusTable = {
  BOOKED: sub(P, "info_received"),
  "IN TRANSIT": T,
  DISPATCHED: T,
  RECEIVED: T,
  "OUT FOR DELIVERY": O,
  DELIVERED: D,
  "NOT DELIVERED": sub(E, "delivery_attempt_failed"),
  "NON DELIVERED": sub(E, "delivery_attempt_failed"),
};

const RTO_BACK = /deliver|returned to (shipper|origin|consignor|sender)/i;

/** Maps one DTDC event: `strCode` table → `RTO*` rule → text table → shared keywords → in transit. */
export function dtdcRule(code: string, text: string): StatusRule {
  const c = code.toUpperCase().trim();
  if (DTDC_STATUS[c]) return DTDC_STATUS[c];
  if (c.startsWith("RTO")) return RTO_BACK.test(text) ? sub(R, "rto_delivered") : sub(E, "rto_in_transit");
  return DTDC_TEXT[text.toUpperCase().trim()] ?? byKeyword(text) ?? T;
}

function toCheckpoint(d: DtdcDetail): RawCheckpoint | undefined {
  const [code, action, remarks] = [str(d.strCode), str(d.strAction), str(d.sTrRemarks) || str(d.strRemarks)];
  const when = parseNaive(str(d.strActionDate), str(d.strActionTime));
  if (!when) return undefined;
  const rule = dtdcRule(code, action);
  return checkpoint(rule, when, {
    activity: action,
    location: str(d.strOrigin),
    rawCode: code || null,
    rawStatus: action || null,
    remark: rule.state === "exception" ? remarks || action || null : null,
  });
}

/** Shipment-level state from the header, with the RTO rule applied. */
function summaryOf(h: DtdcHeader, rtoNumber: string | null): TrackingSnapshot["summary"] {
  const status = str(h.strStatus);
  if (!status && !rtoNumber) return undefined;
  let rule = dtdcRule("", status);
  if (rtoNumber && rule.state !== "returned")
    rule = RTO_BACK.test(status) && /rto|return/i.test(status) ? sub(R, "rto_delivered") : sub(E, "rto_in_transit");
  const at = parseNaive(str(h.strStatusTransOn), str(h.strStatusTransTime));
  return summary(rule, { rawCode: null, rawStatus: status || null, at: at?.at ?? null });
}

/**
 * Parses a getTrackDetails JSON body.
 * @throws CourierError auth (401 body), not_found (`statusFlag:false`), backend (not the documented JSON)
 */
export function parseDtdc(text: string, awb: string): TrackingSnapshot {
  const doc = parseJson(text);
  if (!doc || typeof doc !== "object" || Array.isArray(doc))
    throw new CourierError("backend", "dtdc: unexpected document");
  const d = doc as Record<string, unknown>;
  if (d.status === 401 || str(d.error) === "Unauthorized")
    throw new CourierError("auth", "dtdc: access token missing or invalid", 401);
  if (d.statusFlag === false || str(d.status).toUpperCase() === "FAILED") {
    const detail = JSON.stringify(d.errorDetails ?? "");
    if (/token|unauthori[sz]ed|credential/i.test(detail)) throw new CourierError("auth", "dtdc: access token refused");
    throw new CourierError("not_found", `dtdc: no data for consignment ${awb}`);
  }
  if (d.statusFlag !== true) throw new CourierError("backend", "dtdc: no trackHeader");
  // One malformed event is skipped (the rest of the history still counts); a malformed header is refused.
  const wire = checkWire("dtdc", DtdcTrackResponse, { ...d, trackDetails: validItems(DtdcDetail, d.trackDetails) });
  const h = wire.trackHeader;
  if (!h) throw new CourierError("backend", "dtdc: no trackHeader");
  const checkpoints = checkpointsOf(wire.trackDetails ?? [], toCheckpoint);
  const rtoNumber = str(h.strRtoNumber) || null;
  const newest = newestOf(checkpoints, "last-listed");
  return {
    checkpoints,
    summary: summaryOf(h, rtoNumber),
    originCity: str(h.strOrigin) || null,
    destinationCity: str(h.strDestination) || null,
    podUrl: null,
    remark: newest?.remark ?? null,
    rtoNumber,
  };
}

const tokens = new TokenCache(async (ctx) => ({ token: await authenticate(ctx) }));

/**
 * `GET /api/dtdc/authenticate?username&password` → the token as plain text. No request signal: the call is shared.
 * @throws CourierError auth (401 or an error text instead of a token), rate_limited, backend
 */
async function authenticate(ctx: AdapterContext): Promise<string> {
  const res = await ctx.http.request({
    path: "/api/dtdc/authenticate",
    query: { username: ctx.credentials.DTDC_USERNAME ?? "", password: ctx.credentials.DTDC_PASSWORD ?? "" },
    headers: { accept: "text/plain, */*" },
  });
  throwForStatus("dtdc", res.status, { notFoundOn404: false });
  const token = res.text.trim();
  if (token.startsWith("{"))
    throw new CourierError(
      /invalid|unauthori|credential|password/i.test(token) ? "auth" : "backend",
      "dtdc: authenticate answered JSON, not a token",
    );
  if (!token || token.length > 4096 || /[\s<>]/.test(token))
    throw new CourierError("backend", "dtdc: authenticate did not answer a token");
  return token;
}

async function trackCall(awb: string, token: string, ctx: AdapterContext) {
  return ctx.http.request({
    method: "POST",
    path: "/rest/JSONCnTrk/getTrackDetails",
    headers: { "x-access-token": token, "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ trkType: "cnno", strcnno: awb, addtnlDtl: "Y" }),
    signal: ctx.signal,
  });
}

/** Forgets every cached DTDC token. @internal test seam */
export function clearDtdcTokens(): void {
  tokens.clear();
}

export const dtdcAdapter: CourierAdapter = {
  id: "dtdc",
  defaultBaseUrl: "https://blktracksvc.dtdc.com/dtdc-api",
  envPrefix: "DTDC",
  credentialVars: ["DTDC_USERNAME", "DTDC_PASSWORD"],
  async track(awb, ctx) {
    const res = await tokens.send(ctx, accountKey(ctx, "DTDC_USERNAME"), "dtdc", (token) => trackCall(awb, token, ctx));
    throwForStatus("dtdc", res.status, { notFoundOn404: false });
    return parseDtdc(res.text, awb);
  },
};
