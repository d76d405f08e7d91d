/** FedEx Track API (developer.fedex.com, "Track API"). Endpoint, mapping, times, EDD, errors: README.md in this folder. */
import {
  arr,
  checkWire,
  checkpoint,
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
} from "../../adapters/status-map.ts";
import { parseIsoLocal, type LocalTime } from "../../adapters/time.ts";
import { CourierError, type CourierAdapter } from "../../adapters/types.ts";
import type { RawCheckpoint, TrackingSnapshot } from "../../../../domain/checkpoint.ts";
import { accountKey, readTokenResponse, TokenCache } from "../../adapters/token-cache.ts";
import {
  FedexTrackResponse,
  type FedexAddress,
  type FedexScanEvent,
  type FedexTimeWindow,
  type FedexTrackResult,
} from "./wire.ts";

/** FedEx status/event codes → state (`fixtures/SOURCE.md`, "Mapping"). */
const FEDEX_STATUS: StatusTable = {
  OC: sub(P, "info_received"),
  IN: sub(P, "info_received"), // derived "Label created"
  EP: P,
  PU: sub(T, "picked_up"),
  PX: sub(T, "picked_up"),
  IT: T,
  IX: T,
  AR: T,
  DP: T,
  AF: T,
  FD: sub(T, "reached_destination"),
  OF: T,
  AA: T,
  PL: T,
  SF: T,
  TR: T,
  CC: T,
  CP: T,
  EA: T,
  OD: O,
  AD: O,
  ED: O,
  DL: D,
  DE: sub(E, "delivery_attempt_failed"),
  SE: E,
  CD: sub(E, "delayed"),
  DY: sub(E, "delayed"),
  DD: sub(E, "delayed"),
  PD: sub(E, "delayed"),
  RL: sub(T, "delayed"),
  RS: sub(E, "rto_in_transit"),
  CA: C,
  HL: sub(O, "ready_for_pickup"),
  HP: sub(O, "ready_for_pickup"),
};

const RETURNED_TEXT = /return(ed)? to (the )?(shipper|sender)|delivered to (the )?(shipper|sender)/i;

/** Maps FedEx codes (most specific first) and text to a rule. */
export function fedexRule(codes: readonly string[], text: string): StatusRule {
  const rule = mapStatus(FEDEX_STATUS, codes, text);
  if (rule.state === "delivered" && RETURNED_TEXT.test(text)) return sub(R, "rto_delivered");
  return withExceptionReason(rule, text);
}

const OFFSET = /([+-]\d{2}):?(\d{2})$|Z$/;

function offsetOf(s: string): number | undefined {
  const m = OFFSET.exec(s);
  if (!m) return undefined;
  if (!m[1]) return 0;
  const sign = m[1].startsWith("-") ? -1 : 1;
  return sign * (Math.abs(Number(m[1])) * 60 + Number(m[2]));
}

function place(loc: FedexAddress): string {
  const city = str(loc.city);
  const st = str(loc.stateOrProvinceCode);
  return city && st ? `${city}, ${st}` : city || str(loc.countryName);
}

function scanToCheckpoint(e: FedexScanEvent, when: LocalTime): RawCheckpoint {
  const [type, derived, description, exception] = [
    str(e.eventType),
    str(e.derivedStatusCode),
    str(e.eventDescription),
    str(e.exceptionDescription),
  ];
  const rule = fedexRule([type, derived], `${description} ${exception}`);
  return checkpoint(rule, when, {
    activity: description || str(e.derivedStatus),
    location: place(e.scanLocation ?? {}),
    rawCode: type || derived || null,
    rawStatus: description || null,
    remark:
      rule.state === "exception"
        ? exception || description || null
        : rule.sub === "ready_for_pickup"
          ? exception || null
          : null,
  });
}

/** Checkpoints of one trackResult; naive dates borrow the next-listed scan's offset. */
function scanCheckpoints(r: FedexTrackResult): RawCheckpoint[] {
  const scans = r.scanEvents ?? [];
  const offsets = scans.map((s) => offsetOf(str(s.date)));
  const out: RawCheckpoint[] = [];
  scans.forEach((s, i) => {
    const fallback =
      offsets.slice(i + 1).find((o) => o !== undefined) ??
      offsets
        .slice(0, i)
        .reverse()
        .find((o) => o !== undefined) ??
      0;
    const when = parseIsoLocal(str(s.date), fallback);
    if (when) out.push(scanToCheckpoint(s, when));
  });
  return out;
}

const windowDate = (w: FedexTimeWindow | undefined) => estimateDate(w?.window?.ends) ?? estimateDate(w?.window?.begins);

/** The EDD of one trackResult, `YYYY-MM-DD`, or null (order: see the module comment). */
export function fedexEstimate(r: FedexTrackResult): string | null {
  const listed = (r.dateAndTimes ?? []).find((d) => str(d.type) === "ESTIMATED_DELIVERY");
  return (
    windowDate(r.estimatedDeliveryTimeWindow) ??
    estimateDate(listed?.dateTime) ??
    windowDate(r.standardTransitTimeWindow)
  );
}

/** The latest `at` (ISO strings compare in time order), "" for none. */
function newestAt(cps: RawCheckpoint[]): string {
  let newest = "";
  for (const c of cps) if (c.at > newest) newest = c.at;
  return newest;
}

/** Classifies a FedEx error code (per number or whole request). */
function fedexErrorKind(code: string): "not_found" | "invalid_number" | "auth" | "backend" {
  if (/NOTFOUND|NOT\.FOUND/i.test(code) && /TRACKING/i.test(code)) return "not_found";
  if (/TRACKINGNUMBER\.(EMPTY|INVALID)|TRACKING\.INVALID|INVALID\.INPUT/i.test(code)) return "invalid_number";
  if (/NOT\.AUTHORIZED|UNAUTHORIZED|LOGIN\.REAUTHENTICATE|INVALID\.TOKEN/i.test(code)) return "auth";
  return "backend";
}

/** Parses a Track API 200 document for `awb`. @throws CourierError not_found | invalid_number | auth | backend */
export function parseFedex(text: string, awb: string): TrackingSnapshot {
  const raw = obj(parseJson(text));
  const errors = arr(raw.errors);
  const [error] = errors;
  if (error && !raw.output) {
    const code = str(error.code);
    throw new CourierError(fedexErrorKind(code), `fedex: ${code || "request error"}`);
  }
  const complete = checkWire("fedex", FedexTrackResponse, raw).output?.completeTrackResults;
  if (!complete) throw new CourierError("backend", "fedex: no completeTrackResults");
  const entry =
    complete.find((c) => str(c.trackingNumber) === awb) ?? (complete.length === 1 ? complete[0] : undefined);
  const results = entry?.trackResults ?? [];
  const usable = results.filter((r) => !Object.keys(r.error ?? {}).length);
  if (!usable.length) {
    const code = str(results[0]?.error?.code);
    throw new CourierError(
      results.length && code ? fedexErrorKind(code) : "not_found",
      `fedex: ${code || "no track result"}`,
    );
  }
  // Several results for one number: take the shipment with the newest scan.
  const scored = usable.map((r) => ({ r, cps: scanCheckpoints(r) }));
  const { r, cps } = scored.reduce((a, b) => (newestAt(b.cps) > newestAt(a.cps) ? b : a));
  const latest = r.latestStatusDetail ?? {};
  const latestText = `${str(latest.description)} ${str(latest.statusByLocale)}`;
  let summaryRule = fedexRule([str(latest.code), str(latest.derivedCode)], latestText);
  if (summaryRule.state === "delivered" && Object.keys(r.returnDetail ?? {}).length && RETURNED_TEXT.test(latestText))
    summaryRule = sub(R, "rto_delivered");
  const newest = newestOf(cps, "first-listed");
  const actual = (r.dateAndTimes ?? []).find((d) => str(d.type) === "ACTUAL_DELIVERY");
  const summaryAt = actual && summaryRule.state === "delivered" ? parseIsoLocal(str(actual.dateTime))?.at : newest?.at;
  return {
    checkpoints: cps,
    summary: Object.keys(latest).length
      ? summary(summaryRule, {
          rawCode: str(latest.code) || null,
          rawStatus: str(latest.statusByLocale) || str(latest.description) || null,
          at: summaryAt ?? null,
        })
      : undefined,
    originCity:
      str(r.originLocation?.locationContactAndAddress?.address?.city) ||
      str(r.shipperInformation?.address?.city) ||
      null,
    destinationCity: str(r.lastUpdatedDestinationAddress?.city) || str(r.recipientInformation?.address?.city) || null,
    podUrl: null,
    remark: newest?.remark ?? null,
    estimatedDelivery: fedexEstimate(r),
  };
}

const tokens = new TokenCache(async (ctx) => {
  const form = new URLSearchParams({
    grant_type: "client_credentials",
    client_id: ctx.credentials.FEDEX_CLIENT_ID ?? "",
    client_secret: ctx.credentials.FEDEX_CLIENT_SECRET ?? "",
  });
  const res = await ctx.http.request({
    method: "POST",
    path: "/oauth/token",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    body: form.toString(),
  });
  return readTokenResponse("fedex", res.status, res.text);
});

/** The documented request body for one number (`track-request.json`). */
function fedexRequestBody(awb: string): string {
  return JSON.stringify({
    trackingInfo: [{ trackingNumberInfo: { trackingNumber: awb } }],
    includeDetailedScans: true,
  });
}

export const fedexAdapter: CourierAdapter = {
  id: "fedex",
  defaultBaseUrl: "https://apis.fedex.com",
  envPrefix: "FEDEX",
  credentialVars: ["FEDEX_CLIENT_ID", "FEDEX_CLIENT_SECRET"],
  async track(awb, ctx) {
    const send = (token: string) =>
      ctx.http.request({
        method: "POST",
        path: "/track/v1/trackingnumbers",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json",
          "x-locale": "en_US",
        },
        body: fedexRequestBody(awb),
        signal: ctx.signal,
      });
    const res = await tokens.send(ctx, accountKey(ctx, "FEDEX_CLIENT_ID"), "fedex", send);
    if (res.status === 400 || res.status === 404) {
      // Whole-request errors come as `{errors:[{code,message}]}`.
      const code = str(arr(obj(tryJson(res.text)).errors)[0]?.code);
      if (code) throw new CourierError(fedexErrorKind(code), `fedex: ${code}`, res.status);
    }
    throwForStatus("fedex", res.status, { notFoundOn404: false });
    return parseFedex(res.text, awb);
  },
};
