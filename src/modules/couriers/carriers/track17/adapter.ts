/** 17TRACK API v2.2, the asynchronous aggregator (spec-map Decisions); details: README.md here. */
import {
  arr,
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
} from "../../adapters/kit.ts";
import { mapStatus, sub, C, D, E, O, P, R, T, type StatusRule, type StatusTable } from "../../adapters/status-map.ts";
import { parseIsoLocal } from "../../adapters/time.ts";
import { CourierError, type AdapterContext, type CourierAdapter } from "../../adapters/types.ts";
import type { RawCheckpoint, TrackingSnapshot } from "../../../../domain/checkpoint.ts";
import { asyncPollDelayMs } from "../../../../domain/limits.ts";
import { Track17Envelope, type Track17Event } from "./wire.ts";

/** 17TRACK `status`, `sub_status` and event `stage` → state (`fixtures/SOURCE.md`). */
const TRACK17_STATUS: StatusTable = {
  NotFound: P,
  InfoReceived: sub(P, "info_received"),
  InTransit: T,
  InTransit_PickedUp: sub(T, "picked_up"),
  InTransit_Arrival: sub(T, "reached_destination"),
  PickedUp: sub(T, "picked_up"),
  Departure: T,
  Arrival: sub(T, "reached_destination"),
  AvailableForPickup: sub(O, "ready_for_pickup"),
  OutForDelivery: O,
  DeliveryFailure: sub(E, "delivery_attempt_failed"),
  Delivered: D,
  Exception: E,
  Exception_Returning: sub(E, "rto_in_transit"),
  Returning: sub(E, "rto_in_transit"),
  Exception_Returned: sub(R, "rto_delivered"),
  Returned: sub(R, "rto_delivered"),
  Exception_Cancel: C,
  Exception_Delayed: sub(E, "delayed"),
  Exception_Lost: sub(E, "lost"),
  Exception_Damage: sub(E, "damaged"),
  Expired: sub(E, "expired"),
};

/** 17TRACK error codes (samples: -18010012, -18019901, -18019902; the rest unverified). */
const ALREADY_REGISTERED = -18019901;
const NOT_REGISTERED = -18019902;
const INVALID_FORMAT = new Set([-18010012, -18019903]);
const AUTH_CODES = new Set([-18010001, -18010002, -18010004, -18010005]);
const QUOTA_CODES = new Set([-18019908]);

/** Maps `sub_status` (e.g. `Exception_Returning`) / `status` or `stage`, falling back to the main status before `_`. */
export function track17Rule(subStatus: string, status: string, text: string): StatusRule {
  return mapStatus(TRACK17_STATUS, [subStatus, status, subStatus.split("_")[0]], text);
}

function toCheckpoint(e: Track17Event): RawCheckpoint | undefined {
  const when = parseIsoLocal(str(e.time_iso)) ?? parseIsoLocal(str(e.time_utc), 0);
  if (!when) return undefined;
  const [description, stage, subStatus] = [str(e.description), str(e.stage), str(e.sub_status)];
  const rule = track17Rule(subStatus, stage, description);
  return checkpoint(rule, when, {
    activity: description,
    location: str(e.location) || str(e.address?.city) || str(e.address?.country),
    rawCode: subStatus || stage || null,
    rawStatus: description || null,
    remark: rule.state === "exception" ? description || null : null,
  });
}

/** What one `gettrackinfo` answer means for `awb`: a snapshot, or "pending" (poll again). */
export type Track17Outcome = TrackingSnapshot | "pending";

/** The envelope of a `register`/`gettrackinfo` answer. @throws CourierError auth | rate_limited | backend */
function envelope(text: string) {
  const doc = obj(parseJson(text));
  const code = Number(doc.code ?? 0);
  if (code) {
    const message = str(arr(obj(doc.data).errors)[0]?.message) || `code ${code}`;
    if (AUTH_CODES.has(code)) throw new CourierError("auth", `track17: ${message}`);
    if (QUOTA_CODES.has(code)) throw new CourierError("rate_limited", `track17: ${message}`);
    throw new CourierError("backend", `track17: ${message}`);
  }
  return checkWire("track17", Track17Envelope, doc).data ?? {};
}

/** Interprets a `register` answer. @throws CourierError invalid_number | auth | backend */
export function parseTrack17Register(text: string, awb: string): void {
  const data = envelope(text);
  if ((data.accepted ?? []).some((a) => str(a.number) === awb)) return;
  const rej = (data.rejected ?? []).find((r) => str(r.number) === awb);
  if (!rej) {
    if (!data.accepted) throw new CourierError("backend", "track17: register answer without data");
    return;
  }
  const err = rej.error ?? {};
  const code = Number(err.code);
  if (code === ALREADY_REGISTERED) return;
  if (INVALID_FORMAT.has(code))
    throw new CourierError("invalid_number", `track17: ${str(err.message) || "invalid number"}`);
  if (QUOTA_CODES.has(code)) throw new CourierError("rate_limited", `track17: ${str(err.message) || "quota spent"}`);
  throw new CourierError("backend", `track17: register rejected (${code})`);
}

/** Interprets a `gettrackinfo` answer (or the webhook's `data` object). @throws CourierError not_found | invalid_number | auth | backend */
export function parseTrack17(text: string, awb: string): Track17Outcome {
  const data = envelope(text);
  // The webhook body carries the accepted entry itself in `data` (same track_info shape).
  const entry = "track_info" in data ? data : (data.accepted ?? []).find((a) => str(a.number) === awb);
  if (!entry) {
    const rej = (data.rejected ?? []).find((r) => str(r.number) === awb);
    if (!rej) {
      if (!data.accepted) throw new CourierError("backend", "track17: gettrackinfo answer without data");
      return "pending";
    }
    const code = Number(rej.error?.code);
    if (INVALID_FORMAT.has(code)) throw new CourierError("invalid_number", `track17: ${str(rej.error?.message)}`);
    if (code === NOT_REGISTERED) return "pending"; // registration not visible yet
    throw new CourierError("not_found", `track17: rejected (${code}) ${str(rej.error?.message)}`.trim());
  }
  const info = entry.track_info;
  if (!info || !Object.keys(info).length) return "pending";
  const latest = info.latest_status ?? {};
  const status = str(latest.status);
  const subStatus = str(latest.sub_status);
  const providers = info.tracking?.providers ?? [];
  const checkpoints = checkpointsOf(
    providers.flatMap((p) => p.events ?? []),
    toCheckpoint,
  );
  if (status === "NotFound" || !status) {
    if (subStatus === "NotFound_InvalidCode")
      throw new CourierError("invalid_number", "track17: the carrier says the number is invalid");
    const synced = providers.some((p) => str(p.latest_sync_status) === "Success");
    if (!checkpoints.length) {
      if (synced) throw new CourierError("not_found", "track17: the carrier has no record of the number");
      return "pending";
    }
  }
  const latestEvent = info.latest_event ?? {};
  const rule = track17Rule(subStatus, status, str(latestEvent.description));
  const newest = newestOf(checkpoints, "first-listed");
  const summaryAt = parseIsoLocal(str(latestEvent.time_utc), 0)?.at ?? newest?.at ?? null;
  const estimate = info.time_metrics?.estimated_delivery_date;
  return {
    checkpoints,
    summary: summary(rule, {
      rawCode: subStatus || status || null,
      rawStatus: str(latestEvent.description) || status || null,
      at: summaryAt,
    }),
    originCity: str(info.shipping_info?.shipper_address?.city) || null,
    destinationCity: str(info.shipping_info?.recipient_address?.city) || null,
    podUrl: null,
    remark:
      newest?.remark ??
      (rule.state === "exception" ? str(latest.sub_status_descr) || str(latestEvent.description) || null : null),
    estimatedDelivery: estimateDate(estimate?.to) ?? estimateDate(estimate?.from),
  };
}

/** The register/gettrackinfo body for one number. */
function track17Body(awb: string, carrier: number | undefined): string {
  return JSON.stringify([carrier ? { number: awb, carrier } : { number: awb }]);
}

async function post(ctx: AdapterContext, path: string, body: string) {
  const res = await ctx.http.request({
    method: "POST",
    path,
    headers: {
      "17token": ctx.credentials.TRACK17_API_KEY ?? "",
      "content-type": "application/json",
      accept: "application/json",
    },
    body,
    signal: ctx.signal,
  });
  throwForStatus("track17", res.status, { notFoundOn404: false });
  return res.text;
}

export const track17Adapter: CourierAdapter = {
  id: "track17",
  defaultBaseUrl: "https://api.17track.net",
  envPrefix: "TRACK17",
  credentialVars: ["TRACK17_API_KEY"],
  async: true,
  async track(awb, ctx) {
    const body = track17Body(awb, ctx.courier.track17Carrier);
    parseTrack17Register(await post(ctx, "/track/v2.2/register", body), awb);
    for (let n = 0; ; n++) {
      const outcome = parseTrack17(await post(ctx, "/track/v2.2/gettrackinfo", body), awb);
      if (outcome !== "pending") return outcome;
      // Within the asynchronous budget the registry enforces (src/domain/limits.ts).
      await ctx.sleep(asyncPollDelayMs(n));
    }
  },
};
