/** Aramex `TrackShipments` over SOAP 1.1 (Aramex developer docs); details: README.md in this folder. */
import {
  asArray,
  checkWire,
  checkpoint,
  checkpointsOf,
  newestOf,
  parseXml,
  str as txt,
  summaryFromCheckpoint,
  throwForStatus,
} from "../../adapters/kit.ts";
import {
  byKeyword,
  firstMatch,
  mapStatus,
  sub,
  C,
  E,
  O,
  P,
  R,
  T,
  type StatusRule,
  type StatusTable,
  type TextRules,
} from "../../adapters/status-map.ts";
import { parseIsoLocal } from "../../adapters/time.ts";
import { CourierError, type CourierAdapter } from "../../adapters/types.ts";
import type { RawCheckpoint, TrackingSnapshot } from "../../../../domain/checkpoint.ts";
import { AramexDocument, type AramexTrackingResponse, type AramexTrackingResult } from "./wire.ts";

/** `UpdateCode` → state (only SH001 is verified). */
const ARAMEX_CODES: StatusTable = {
  SH001: sub(T, "reached_destination"),
};

/** Aramex wording tried before the common keyword list. */
const ARAMEX_TEXT: TextRules = [
  [/record created|shipment (data|information) received|shipment created/i, sub(P, "info_received")],
  [/returned to (the )?(shipper|sender|origin)/i, sub(R, "rto_delivered")],
  [/return(ing)? to (the )?(shipper|sender|origin)|\brto\b/i, sub(E, "rto_initiated")],
  [/\bcancel+ed\b/i, C],
  [/out for delivery/i, O],
];

/** Maps one TrackingResult. */
export function aramexRule(code: string, description: string, problemCode: string, comments: string): StatusRule {
  const text = `${description} ${comments}`;
  const worded = firstMatch(ARAMEX_TEXT, description);
  if (worded) return worded;
  if (problemCode) {
    const k = byKeyword(text);
    return k?.state === "exception" ? k : E;
  }
  return mapStatus(ARAMEX_CODES, [code], description);
}

function toCheckpoint(r: AramexTrackingResult): RawCheckpoint | undefined {
  const when = parseIsoLocal(txt(r.UpdateDateTime), 0);
  if (!when) return undefined;
  const code = txt(r.UpdateCode);
  const description = txt(r.UpdateDescription);
  const problem = txt(r.ProblemCode);
  const comments = txt(r.Comments);
  const rule = aramexRule(code, description, problem, comments);
  return checkpoint(rule, when, {
    activity: description,
    location: txt(r.UpdateLocation),
    rawCode: code || null,
    rawStatus: description || null,
    remark:
      rule.state === "exception"
        ? comments || (problem ? `${problem}: ${description}` : description) || null
        : comments || null,
  });
}

/** The `ShipmentTrackingResponse` of a SOAP body. @throws CourierError backend (not that shape, a SOAP fault) */
function trackingResponse(text: string): AramexTrackingResponse {
  const raw = parseXml(text);
  if (raw.Envelope === undefined) throw new CourierError("backend", "aramex: no SOAP Envelope");
  const body = checkWire("aramex", AramexDocument, raw).Envelope.Body;
  if (body.Fault !== undefined)
    throw new CourierError(
      "backend",
      `aramex: SOAP fault ${body.Fault === "" ? "" : txt(body.Fault.faultstring)}`.trim(),
    );
  if (!body.ShipmentTrackingResponse) throw new CourierError("backend", "aramex: no ShipmentTrackingResponse");
  return body.ShipmentTrackingResponse;
}

/** The updates listed for `awb` (the only entry when the answer has one). @throws CourierError not_found */
function updatesFor(results: AramexTrackingResponse["TrackingResults"], awb: string): AramexTrackingResult[] {
  const pairs = Object.entries(results || {})
    .filter(([k]) => k.startsWith("KeyValueOfstringArrayOfTrackingResult"))
    .flatMap(([, v]) => asArray(v));
  const pair = pairs.find((p) => txt(p.Key) === awb) ?? (pairs.length === 1 ? pairs[0] : undefined);
  if (!pair) throw new CourierError("not_found", "aramex: waybill not in TrackingResults");
  return pair.Value ? asArray(pair.Value.TrackingResult) : [];
}

/** Parses a TrackShipments SOAP response for `awb`. @throws CourierError not_found | auth | backend */
export function parseAramex(text: string, awb: string): TrackingSnapshot {
  const resp = trackingResponse(text);
  if (txt(resp.HasErrors).toLowerCase() === "true") {
    const n = (resp.Notifications ? asArray(resp.Notifications.Notification) : [])[0] ?? {};
    const what = `${txt(n.Code)} ${txt(n.Message)}`.trim();
    const auth =
      txt(n.Code) === "ERR01" || /user ?name|password|account|pin|credential|unauthori[sz]ed/i.test(txt(n.Message));
    throw new CourierError(auth ? "auth" : "backend", `aramex: ${what || "HasErrors"}`);
  }
  const missing = resp.NonExistingWaybills ? asArray(resp.NonExistingWaybills.string).map(txt) : [];
  if (missing.includes(awb)) throw new CourierError("not_found", "aramex: waybill in NonExistingWaybills");
  const checkpoints = checkpointsOf(updatesFor(resp.TrackingResults, awb), toCheckpoint);
  const newest = newestOf(checkpoints, "first-listed");
  return {
    checkpoints,
    // Known to Aramex (not in NonExistingWaybills) with no updates yet: information received.
    summary: newest
      ? summaryFromCheckpoint(newest)
      : { state: "pending", subStatus: "info_received", rawCode: null, rawStatus: null, at: null },
    originCity: null,
    destinationCity: null,
    podUrl: null,
    remark: newest?.remark ?? null,
  };
}

const esc = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");

/** The SOAP envelope of the fixture `track-soap-request.xml` for one waybill. */
export function aramexRequestBody(awb: string, c: Readonly<Record<string, string>>): string {
  const v = (k: string) => esc(c[k] ?? "");
  return `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:v1="http://ws.aramex.net/ShippingAPI/v1/" xmlns:arr="http://schemas.microsoft.com/2003/10/Serialization/Arrays">
    <soap:Header/>
    <soap:Body>
        <v1:ShipmentTrackingRequest>
            <v1:ClientInfo>
                <v1:UserName>${v("ARAMEX_USERNAME")}</v1:UserName>
                <v1:Password>${v("ARAMEX_PASSWORD")}</v1:Password>
                <v1:Version>1.0</v1:Version>
                <v1:AccountNumber>${v("ARAMEX_ACCOUNT_NUMBER")}</v1:AccountNumber>
                <v1:AccountPin>${v("ARAMEX_ACCOUNT_PIN")}</v1:AccountPin>
                <v1:AccountEntity>${v("ARAMEX_ACCOUNT_ENTITY")}</v1:AccountEntity>
                <v1:AccountCountryCode>${v("ARAMEX_ACCOUNT_COUNTRY_CODE")}</v1:AccountCountryCode>
            </v1:ClientInfo>
            <v1:Shipments>
                <arr:string>${esc(awb)}</arr:string>
            </v1:Shipments>
            <v1:GetLastTrackingUpdateOnly>false</v1:GetLastTrackingUpdateOnly>
        </v1:ShipmentTrackingRequest>
    </soap:Body>
</soap:Envelope>`;
}

export const ARAMEX_SOAP_ACTION = "http://ws.aramex.net/ShippingAPI/v1/Service_1_0/TrackShipments";

export const aramexAdapter: CourierAdapter = {
  id: "aramex",
  defaultBaseUrl: "https://ws.aramex.net",
  envPrefix: "ARAMEX",
  credentialVars: [
    "ARAMEX_USERNAME",
    "ARAMEX_PASSWORD",
    "ARAMEX_ACCOUNT_NUMBER",
    "ARAMEX_ACCOUNT_PIN",
    "ARAMEX_ACCOUNT_ENTITY",
    "ARAMEX_ACCOUNT_COUNTRY_CODE",
  ],
  async track(awb, ctx) {
    const res = await ctx.http.request({
      method: "POST",
      path: "/ShippingAPI.V2/Tracking/Service_1_0.svc",
      headers: { "content-type": "text/xml; charset=utf-8", soapaction: ARAMEX_SOAP_ACTION, accept: "text/xml" },
      body: aramexRequestBody(awb, ctx.credentials),
      signal: ctx.signal,
    });
    // WCF answers a SOAP Fault with 500; it is a backend error like any other 5xx.
    throwForStatus("aramex", res.status, { notFoundOn404: false });
    return parseAramex(res.text, awb);
  },
};
