/** Xpressbees: login for a token, then track (fixtures/SOURCE.md); details: README.md in this folder. */
import {
  checkWire,
  checkpoint,
  checkpointsOf,
  newestOf,
  obj,
  parseJson,
  str,
  summary,
  throwForStatus,
  validItems,
} from "../../adapters/kit.ts";
import { byKeyword, sub, C, D, E, O, P, R, T, type StatusRule, type StatusTable } from "../../adapters/status-map.ts";
import { parseNaive } from "../../adapters/time.ts";
import { CourierError, type AdapterContext, type CourierAdapter } from "../../adapters/types.ts";
import type { RawCheckpoint, TrackingSnapshot } from "../../../../domain/checkpoint.ts";
import { accountKey, TokenCache } from "../../adapters/token-cache.ts";
import { XpressbeesEvent, XpressbeesLoginResponse, XpressbeesTrackResponse } from "./wire.ts";

/** Raw Xpressbees status codes → state. Verified via Shiprocket: DRC…DLVD; the rest unverified. */
const XPRESSBEES_STATUS: StatusTable = {
  DRC: sub(P, "info_received"),
  OFP: P,
  PUD: sub(T, "picked_up"),
  PKD: sub(T, "picked_up"),
  IT: T,
  RAD: sub(T, "reached_destination"),
  OFD: O,
  DLVD: D,
  UD: sub(E, "delivery_attempt_failed"),
  LOST: sub(E, "lost"),
  DMG: sub(E, "damaged"),
  CAN: C,
  CANCELLED: C,
  RTO: sub(E, "rto_in_transit"),
  "RTO-IT": sub(E, "rto_in_transit"),
  "RTO-OFD": sub(E, "rto_in_transit"),
  "RTO-DLVD": sub(R, "rto_delivered"),
  RTD: sub(R, "rto_delivered"),
};

/** Maps one Xpressbees event: code table → `RTO*` prefix → keywords on the message → in transit. */
export function xpressbeesRule(code: string, message: string): StatusRule {
  const c = code.toUpperCase().trim();
  const exact = XPRESSBEES_STATUS[c];
  if (exact) return exact;
  if (c.startsWith("RTO"))
    return /deliver/i.test(message) || c.endsWith("DLVD") ? sub(R, "rto_delivered") : sub(E, "rto_in_transit");
  return byKeyword(message) ?? T;
}

function toCheckpoint(h: XpressbeesEvent): RawCheckpoint | undefined {
  const [code, message] = [str(h.status_code), str(h.message)];
  const when = parseNaive(str(h.event_time));
  if (!when) return undefined;
  const rule = xpressbeesRule(code, message);
  return checkpoint(rule, when, {
    activity: message,
    location: str(h.location),
    rawCode: code || null,
    rawStatus: message || null,
    remark: rule.state === "exception" ? message || null : null,
  });
}

/**
 * Parses a `shipments2/track/{awb}` JSON body.
 * @throws CourierError not_found (`status:false`), backend (not the documented JSON)
 */
export function parseXpressbees(text: string, awb: string): TrackingSnapshot {
  const doc = parseJson(text);
  if (!doc || typeof doc !== "object" || Array.isArray(doc))
    throw new CourierError("backend", "xpressbees: unexpected document");
  const d = doc as Record<string, unknown>;
  if (d.status === false) {
    if (/token|unauthori[sz]ed|expired/i.test(str(d.message)))
      throw new CourierError("auth", "xpressbees: token refused");
    throw new CourierError("not_found", `xpressbees: no record of ${awb}`);
  }
  if (d.status !== true || typeof d.data !== "object" || d.data === null || Array.isArray(d.data))
    throw new CourierError("backend", "xpressbees: no data object");
  const raw = obj(d.data);
  if (raw.history !== undefined && !Array.isArray(raw.history))
    throw new CourierError("backend", "xpressbees: history is not a list");
  // One malformed event is skipped (the rest of the history still counts); a malformed document is refused.
  const data =
    checkWire("xpressbees", XpressbeesTrackResponse, {
      ...d,
      data: { ...raw, history: validItems(XpressbeesEvent, raw.history) },
    }).data ?? {};
  const checkpoints = checkpointsOf(data.history ?? [], toCheckpoint);
  const status = str(data.status);
  return {
    checkpoints,
    summary: status
      ? summary(xpressbeesRule(status, status), { rawCode: null, rawStatus: status, at: null })
      : undefined,
    originCity: str(data.origin) || null,
    destinationCity: str(data.destination) || null,
    podUrl: null,
    remark: newestOf(checkpoints, "last-listed")?.remark ?? null,
  };
}

const tokens = new TokenCache(async (ctx) => ({ token: await login(ctx) }));

/**
 * `POST /api/users/login` → `data` is the token. No request signal: the login is shared by concurrent lookups.
 * @throws CourierError auth (401 or `status:false`), rate_limited, backend
 */
async function login(ctx: AdapterContext): Promise<string> {
  const res = await ctx.http.request({
    method: "POST",
    path: "/api/users/login",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({
      email: ctx.credentials.XPRESSBEES_EMAIL ?? "",
      password: ctx.credentials.XPRESSBEES_PASSWORD ?? "",
    }),
  });
  throwForStatus("xpressbees", res.status, { notFoundOn404: false });
  const doc = obj(parseJson(res.text));
  if (doc.status === false) throw new CourierError("auth", "xpressbees: email or password refused");
  const token = str(checkWire("xpressbees", XpressbeesLoginResponse, doc).data);
  if (doc.status !== true || !token || /\s/.test(token))
    throw new CourierError("backend", "xpressbees: login did not answer a token");
  return token;
}

function trackCall(awb: string, token: string, ctx: AdapterContext) {
  return ctx.http.request({
    path: `/api/shipments2/track/${encodeURIComponent(awb)}`,
    headers: { authorization: `Bearer ${token}`, accept: "application/json" },
    signal: ctx.signal,
  });
}

/** Forgets every cached Xpressbees token. @internal test seam */
export function clearXpressbeesTokens(): void {
  tokens.clear();
}

export const xpressbeesAdapter: CourierAdapter = {
  id: "xpressbees",
  defaultBaseUrl: "https://shipment.xpressbees.com",
  envPrefix: "XPRESSBEES",
  credentialVars: ["XPRESSBEES_EMAIL", "XPRESSBEES_PASSWORD"],
  async track(awb, ctx) {
    const res = await tokens.send(ctx, accountKey(ctx, "XPRESSBEES_EMAIL"), "xpressbees", (token) =>
      trackCall(awb, token, ctx),
    );
    throwForStatus("xpressbees", res.status);
    return parseXpressbees(res.text, awb);
  },
};
