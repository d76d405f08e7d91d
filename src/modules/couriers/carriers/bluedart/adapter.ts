/** Blue Dart's legacy TnT servlet, XML only (fixtures/SOURCE.md); details: README.md in this folder. */
import {
  asArray,
  checkWire,
  checkpoint,
  checkpointsOf,
  estimateDate,
  newestOf,
  parseXml,
  str,
  summary,
  throwForStatus,
} from "../../adapters/kit.ts";
import {
  byKeyword,
  firstMatch,
  sub,
  C,
  D,
  E,
  O,
  P,
  R,
  T,
  type StatusRule,
  type StatusTable,
  type TextRules,
} from "../../adapters/status-map.ts";
import { IST_ZONE, parseNaive } from "../../adapters/time.ts";
import { CourierError, type CourierAdapter } from "../../adapters/types.ts";
import type { RawCheckpoint, TrackingSnapshot } from "../../../../domain/checkpoint.ts";
import { REASON_CODES, reasonFromRemark, type ReasonCode } from "../../../../domain/ndr.ts";
import { BLUEDART_NDR_CODES } from "./reasons.ts";
import { BluedartDocument, type BluedartScan } from "./wire.ts";

const NOT_ATTEMPT: ReadonlySet<ReasonCode> = new Set(["damaged", "lost", "other"]);

/** Scan text rules, checked first, most specific first (upper-case text). Edit here when Blue Dart wording is confirmed. */
const BLUEDART_TEXT: TextRules = [
  [/\bRTO\b.*\bDELIVERED\b|RETURNED TO (SHIPPER|ORIGIN|CONSIGNOR)|SHIPMENT RETURNED/, sub(R, "rto_delivered")],
  [/\bRTO\b|RETURN TO (ORIGIN|SHIPPER)/, sub(E, "rto_in_transit")],
  [/CANCEL/, C],
  [/\bLOST\b/, sub(E, "lost")],
  [/DAMAGED/, sub(E, "damaged")],
  [/OUTSCANNED TO NETWORK|CONNECTED|CONSOLIDATED|AUTO TALLY|BAG\b/, T],
  [/ARRIVED AT DESTINATION|INSCAN AT DESTINATION/, sub(T, "reached_destination")],
  [/^SHIPMENT OUTSCAN$|OUT FOR DELIVERY/, O],
  [/SHIPMENT BOOKED|MANIFESTED|PICKUP (REQUEST|REGISTERED)/, sub(P, "info_received")],
  [/PICKED UP|PICK UP DONE/, sub(T, "picked_up")],
  [/SHIPMENT INSCAN/, T],
];

/**
 * `StatusType` codes (README.md, "Mapping"). UD ("undelivered": not delivered yet) is deliberately absent: the real
 * sample carries it on every in-progress scan, so a UD scan is told apart by its code or wording ({@link bluedartRule}).
 */
const BLUEDART_TYPE: StatusTable = {
  DL: D,
  RT: sub(E, "rto_in_transit"),
  PU: sub(T, "picked_up"),
  IT: T,
};

/** Failed-attempt scan codes (`<ScanCode>-<ScanGroupType>`, reasons.ts): damaged and lost keep their sub-status. */
const BLUEDART_CODES: StatusTable = Object.fromEntries(
  Object.entries(BLUEDART_NDR_CODES).map(([key, reason]) => [
    key,
    reason === "damaged" || reason === "lost" ? sub(E, reason) : sub(E, "delivery_attempt_failed"),
  ]),
);

/** Reasons that mean a delivery was tried and failed (damaged and lost have their own text rules). */
const ATTEMPT_REASONS: ReadonlySet<ReasonCode> = new Set(REASON_CODES.filter((r) => !NOT_ATTEMPT.has(r)));

/** A UD scan whose wording names a failed-attempt reason (docs/ndr.md, remark keywords) is a failed attempt. */
function failedAttemptByWording(type: string, text: string): StatusRule | undefined {
  if (type !== "UD") return undefined;
  const reason = reasonFromRemark(text);
  return reason && ATTEMPT_REASONS.has(reason) ? sub(E, "delivery_attempt_failed") : undefined;
}

/**
 * Maps one Blue Dart status: its scan code (`scanCode`, `"003-T"`) → scan text rules → a UD scan's failed-attempt
 * wording → `StatusType` → common keywords → in transit.
 */
export function bluedartRule(type: string, text: string, scanCode = ""): StatusRule {
  const t = type.toUpperCase();
  return (
    BLUEDART_CODES[scanCode.toUpperCase()] ??
    firstMatch(BLUEDART_TEXT, text.toUpperCase().trim()) ??
    failedAttemptByWording(t, text) ??
    BLUEDART_TYPE[t] ??
    byKeyword(text) ??
    T
  );
}

function toCheckpoint(d: BluedartScan): RawCheckpoint | undefined {
  const [text, type, code, group] = [
    str(d.Scan),
    str(d.ScanType).toUpperCase(),
    str(d.ScanCode),
    str(d.ScanGroupType).toUpperCase(),
  ];
  const when = parseNaive(str(d.ScanDate), str(d.ScanTime));
  if (!when) return undefined;
  // A code means something only with its group (`001-S` is a dispatch, `001-T` a failed attempt).
  const scanCode = code && group ? `${code}-${group}` : "";
  const rule = bluedartRule(type, text, scanCode);
  return checkpoint(rule, when, {
    activity: text,
    location: str(d.ScannedLocation),
    rawCode: scanCode || code || type || null,
    rawStatus: text || null,
    remark: rule.state === "exception" ? text || null : null,
  });
}

/**
 * Parses a custawbquery XML document for `awb`.
 * @throws CourierError not_found (NF / "Incorrect Waybill number"), auth (licence/login error), backend (anything else unexpected)
 */
export function parseBluedart(text: string, awb: string): TrackingSnapshot {
  const raw = parseXml(text);
  if (raw.ShipmentData === undefined) throw new CourierError("backend", "bluedart: no ShipmentData element");
  const root = checkWire("bluedart", BluedartDocument, raw).ShipmentData;
  const data = root === "" ? {} : root;
  const error = str(data.Error);
  if (error) {
    if (/incorrect waybill|no information/i.test(error))
      throw new CourierError("not_found", "bluedart: incorrect waybill number or no information");
    if (/licen[cs]e|login|auth|unauthori[sz]ed|invalid user/i.test(error))
      throw new CourierError("auth", "bluedart: login id or licence key refused");
    throw new CourierError("backend", `bluedart: error in response (${error.slice(0, 80)})`);
  }
  const shipments = asArray(data.Shipment);
  const ship =
    shipments.find((s) => str(s["@WaybillNo"]) === awb) ?? (shipments.length === 1 ? shipments[0] : undefined);
  if (!ship) throw new CourierError("not_found", "bluedart: waybill not in response");
  const statusText = str(ship.Status);
  const statusType = str(ship.StatusType).toUpperCase();
  if (statusType === "NF" || /incorrect waybill|no information/i.test(statusText))
    throw new CourierError("not_found", "bluedart: incorrect waybill number or no information");
  const checkpoints = checkpointsOf(ship.Scans ? asArray(ship.Scans.ScanDetail) : [], toCheckpoint);
  const at = parseNaive(str(ship.StatusDate), str(ship.StatusTime));
  const newest = newestOf(checkpoints, "last-listed");
  return {
    checkpoints,
    summary:
      statusText || statusType
        ? summary(bluedartRule(statusType, statusText), {
            rawCode: statusType || null,
            rawStatus: statusText || null,
            at: at?.at ?? null,
          })
        : undefined,
    originCity: str(ship.Origin) || null,
    destinationCity: str(ship.Destination) || null,
    podUrl: null,
    remark: newest?.remark ?? null,
    estimatedDelivery: estimateDate(ship.ExpectedDeliveryDate, IST_ZONE),
  };
}

export const bluedartAdapter: CourierAdapter = {
  id: "bluedart",
  defaultBaseUrl: "https://api.bluedart.com/servlet",
  envPrefix: "BLUEDART",
  credentialVars: ["BLUEDART_LOGIN_ID", "BLUEDART_LICENSE_KEY"],
  async track(awb, ctx) {
    const res = await ctx.http.request({
      path: "/RoutingServlet",
      query: {
        handler: "tnt",
        action: "custawbquery",
        loginid: ctx.credentials.BLUEDART_LOGIN_ID ?? "",
        awb: "awb",
        numbers: awb,
        format: "xml",
        lickey: ctx.credentials.BLUEDART_LICENSE_KEY ?? "",
        verno: "1.3",
        scan: "1",
      },
      headers: { accept: "application/xml, text/xml" },
      signal: ctx.signal,
    });
    throwForStatus("bluedart", res.status, { notFoundOn404: false });
    return parseBluedart(res.text, awb);
  },
};
