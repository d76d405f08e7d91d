/** DHL Shipment Tracking – Unified (DHL developer portal); details: README.md in this folder. */
import { Value } from "@sinclair/typebox/value";
import {
  checkWire,
  checkpoint,
  checkpointsOf,
  estimateDate,
  newestOf,
  obj,
  parseJson,
  str,
  summary,
  throwForStatus,
  tryJson,
} from "../../adapters/kit.ts";
import {
  firstMatch,
  mapStatus,
  sub,
  withExceptionReason,
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
import { parseIsoLocal } from "../../adapters/time.ts";
import { CourierError, type CourierAdapter } from "../../adapters/types.ts";
import type { RawCheckpoint, TrackingSnapshot } from "../../../../domain/checkpoint.ts";
import { DhlProblem, DhlTrackResponse, type DhlEvent } from "./wire.ts";

/** `statusCode` → state (`fixtures/SOURCE.md`, "Mapping"). */
const DHL_STATUS: StatusTable = {
  "PRE-TRANSIT": sub(P, "info_received"),
  TRANSIT: T,
  DELIVERED: D,
  FAILURE: E,
  UNKNOWN: P,
};

/** Text overrides for what `statusCode` cannot say, tried first; never delivered. */
const DHL_TEXT: TextRules = [
  [/\bcancel+ed\b/i, C],
  [/being returned|return(ing)? to (the )?(shipper|sender|origin)|\brto\b/i, sub(E, "rto_initiated")],
  [
    /returned to (the )?(shipper|sender|origin)|delivered to (the )?(shipper|sender)|return(ed)? shipment delivered/i,
    sub(R, "rto_delivered"),
  ],
  [/out for delivery|with (the )?courier for delivery|out with courier/i, O],
  [/ready for (recipient )?pick ?up|available for pick ?up/i, sub(O, "ready_for_pickup")],
];

/** Maps one DHL status/event object to a rule. */
export function dhlRule(code: string, status: string, description: string): StatusRule {
  const text = `${status} ${description}`;
  // A failure gets its sub-reason from the text (failed attempt, held, …) when there is one.
  return firstMatch(DHL_TEXT, text) ?? withExceptionReason(mapStatus(DHL_STATUS, [code], text), text);
}

const city = (p: { address?: { addressLocality?: unknown } } | undefined) => str(p?.address?.addressLocality);

function toCheckpoint(e: DhlEvent): RawCheckpoint | undefined {
  const when = parseIsoLocal(str(e.timestamp), 0);
  if (!when) return undefined;
  const [code, status, description, remark] = [str(e.statusCode), str(e.status), str(e.description), str(e.remark)];
  const rule = dhlRule(code, status, description);
  return checkpoint(rule, when, {
    activity: description || status,
    location: city(e.location),
    rawCode: code || null,
    rawStatus: status || null,
    // DHL sends an explicit `remark`; an exception without one keeps its description as the reason.
    remark: remark || (rule.state === "exception" ? description || status || null : null),
  });
}

/** Parses a 200 `shipments` document for `awb`. @throws CourierError not_found | backend */
export function parseDhl(text: string, awb: string): TrackingSnapshot {
  const raw = obj(parseJson(text));
  if (!Array.isArray(raw.shipments)) {
    if (raw.status === 404 || /no result/i.test(str(raw.title)))
      throw new CourierError("not_found", `dhl: ${str(raw.detail) || "no shipment found"}`);
    throw new CourierError("backend", "dhl: no shipments in the document");
  }
  const doc = checkWire("dhl", DhlTrackResponse, raw);
  const ship = doc.shipments.find((s) => str(s.id) === awb) ?? doc.shipments[0];
  if (!ship) throw new CourierError("not_found", "dhl: no shipment found");
  const checkpoints = checkpointsOf(ship.events ?? [], toCheckpoint);
  const status = ship.status ?? {};
  const statusCp = toCheckpoint(status);
  const newest = newestOf(checkpoints, "first-listed");
  const podUrl = str(ship.details?.proofOfDelivery?.documentUrl);
  return {
    checkpoints,
    summary: Object.keys(status).length
      ? summary(dhlRule(str(status.statusCode), str(status.status), str(status.description)), {
          rawCode: str(status.statusCode) || null,
          rawStatus: str(status.status) || null,
          at: statusCp?.at ?? null,
        })
      : undefined,
    originCity: city(ship.origin) || null,
    destinationCity: city(ship.destination) || null,
    podUrl: /^https?:\/\//i.test(podUrl) ? podUrl : null,
    remark: (newest ?? statusCp)?.remark ?? null,
    estimatedDelivery:
      estimateDate(ship.estimatedTimeOfDelivery) ??
      estimateDate(ship.estimatedDeliveryTimeFrame?.estimatedThrough) ??
      estimateDate(ship.estimatedDeliveryTimeFrame?.estimatedFrom),
  };
}

export const dhlAdapter: CourierAdapter = {
  id: "dhl",
  defaultBaseUrl: "https://api-eu.dhl.com",
  envPrefix: "DHL",
  credentialVars: ["DHL_API_KEY"],
  async track(awb, ctx) {
    const res = await ctx.http.request({
      path: "/track/shipments",
      query: { trackingNumber: awb },
      headers: { "DHL-API-Key": ctx.credentials.DHL_API_KEY ?? "", accept: "application/json" },
      signal: ctx.signal,
    });
    if (res.status === 404) {
      // The documented not-found answer is a problem body; a 404 without one is a wrong path (misconfigured base URL).
      const body = tryJson(res.text);
      if (Value.Check(DhlProblem, body) && (body.status === 404 || body.title !== undefined))
        throw new CourierError("not_found", `dhl: ${str(body.detail) || "no shipment found"}`, 404);
      throw new CourierError("backend", "dhl: 404 without a problem body", 404);
    }
    throwForStatus("dhl", res.status);
    return parseDhl(res.text, awb);
  },
};
