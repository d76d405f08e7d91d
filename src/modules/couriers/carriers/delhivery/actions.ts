/**
 * Delhivery NDR actions (README.md, "NDR actions"): RE-ATTEMPT, DEFER_DLV and EDIT_DETAILS through the asynchronous
 * NDR package action API (`POST /api/p/update` → UPL id, read back from `GET /api/cmu/get_bulk_upl/<id>`), and
 * return to origin through the Cancel Order API (`POST /api/p/edit`, `cancellation: "true"`), which answers at once.
 */
import { checkWire, parseJson, str, throwForStatus } from "../../adapters/kit.ts";
import {
  CourierError,
  type ActionAnswer,
  type ActionRequest,
  type AdapterContext,
  type CourierActions,
} from "../../adapters/types.ts";
import type { ActionRules } from "../../../../domain/actions.ts";
import { DelhiveryCancelAnswer, DelhiveryNdrAnswer, DelhiveryUplStatus, type DelhiveryNdrRequest } from "./wire.ts";

/** NSL codes Delhivery lists for RE-ATTEMPT (NDR package action API). */
export const REATTEMPT_CODES = [
  "EOD-74",
  "EOD-15",
  "EOD-104",
  "EOD-43",
  "EOD-86",
  "EOD-11",
  "EOD-16",
  "EOD-69",
  "EOD-6",
  "ST-108",
] as const;
/** NSL codes Delhivery lists for DEFER_DLV. */
export const DEFER_CODES = ["EOD-74", "EOD-15", "EOD-11", "EOD-3", "EOD-16", "EOD-6", "ST-108"] as const;
/** DEFER_DLV: "Maximum deferred date is 6 days from the first pending date". */
export const MAX_DEFER_DAYS = 6;

/**
 * Delhivery's rules as our states: "pending" (StatusType UD, not delivered) is a failed attempt here; the Cancel
 * Order API allows Manifested, In Transit, Pending, Open and Scheduled (not Dispatched: out for delivery).
 */
const DELHIVERY_ACTION_RULES: ActionRules = {
  reattempt: { states: ["exception"], subStatuses: ["delivery_attempt_failed"], codes: REATTEMPT_CODES },
  defer_delivery: {
    states: ["exception"],
    subStatuses: ["delivery_attempt_failed"],
    codes: DEFER_CODES,
    maxDeferDays: MAX_DEFER_DAYS,
  },
  update_consignee: {
    states: ["exception"],
    subStatuses: ["delivery_attempt_failed"],
    consigneeFields: ["name", "phone", "address"],
  },
  return_to_origin: {
    states: ["pending", "in_transit", "exception"],
    notSubStatuses: ["rto_initiated", "rto_in_transit", "rto_delivered", "lost", "damaged"],
  },
};

const ACT = { reattempt: "RE-ATTEMPT", defer_delivery: "DEFER_DLV", update_consignee: "EDIT_DETAILS" } as const;

/** The `/api/p/update` body for one action (README.md, "NDR actions"); consignee fields only as given. */
export function ndrBody(req: ActionRequest): DelhiveryNdrRequest {
  if (req.action === "return_to_origin") throw new Error("return_to_origin goes to /api/p/edit");
  const item: DelhiveryNdrRequest["data"][number] = { waybill: req.trackingNumber, act: ACT[req.action] };
  if (req.action === "defer_delivery") {
    if (!req.deferredDate) throw new Error("defer_delivery needs its deferredDate");
    item.action_data = { deferred_date: req.deferredDate };
  }
  if (req.action === "update_consignee") {
    const c = req.consignee ?? {};
    item.action_data = {
      ...(c.name ? { name: c.name } : {}),
      ...(c.phone ? { phone: c.phone } : {}),
      ...(c.address ? { add: c.address } : {}),
    };
  }
  return { data: [item] };
}

const headers = (ctx: AdapterContext) => ({
  authorization: `Token ${ctx.credentials.DELHIVERY_TOKEN}`,
  accept: "application/json",
  "content-type": "application/json",
});

/** A 400 is Delhivery refusing the request itself: a rejection, not a failure to retry. */
function refused(status: number, text: string): ActionAnswer | undefined {
  if (status !== 400 && status !== 422) return undefined;
  const doc = (() => {
    try {
      return parseJson(text) as Record<string, unknown>;
    } catch {
      return {};
    }
  })();
  const reason = str(doc.error) || str(doc.remark) || str(doc.rmk) || `HTTP ${status}`;
  return { status: "rejected", reference: null, reason: reason.slice(0, 200) };
}

/** Parses the NDR API's answer. @throws CourierError backend without a UPL id */
export function parseNdrAnswer(text: string): ActionAnswer {
  const doc = checkWire("delhivery", DelhiveryNdrAnswer, parseJson(text));
  const upl = str(doc.request_id);
  if (!upl) {
    if (doc.error !== undefined) return { status: "rejected", reference: null, reason: str(doc.error).slice(0, 200) };
    throw new CourierError("backend", "delhivery: NDR answer without a request_id");
  }
  return { status: "requested", reference: upl };
}

/** Parses the UPL status for `awb`: `requested` until processed, then the waybill's result. @throws CourierError backend */
export function parseUplStatus(text: string, awb: string): ActionAnswer & { reference: string | null } {
  const doc = checkWire("delhivery", DelhiveryUplStatus, parseJson(text));
  const reference = str(doc.request_id) || null;
  const row = (doc.result ?? []).find((r) => str(r.waybill) === awb);
  if (!row) return { status: "requested", reference };
  const ok = str(row.status).toLowerCase() === "success";
  return ok
    ? { status: "accepted", reference }
    : { status: "rejected", reference, reason: (str(row.remark) || "Rejected by Delhivery").slice(0, 200) };
}

/** Parses the Cancel Order API's answer. @throws CourierError backend for an unreadable body */
export function parseCancelAnswer(text: string): ActionAnswer {
  const doc = checkWire("delhivery", DelhiveryCancelAnswer, parseJson(text));
  const ok = doc.status === true || str(doc.status).toLowerCase() === "true";
  return ok
    ? { status: "accepted", reference: null }
    : {
        status: "rejected",
        reference: null,
        reason: (str(doc.remark) || str(doc.error) || "Rejected by Delhivery").slice(0, 200),
      };
}

export const delhiveryActions: CourierActions = {
  rules: DELHIVERY_ACTION_RULES,
  async submit(req, ctx) {
    const rto = req.action === "return_to_origin";
    const res = await ctx.http.request({
      method: "POST",
      path: rto ? "/api/p/edit" : "/api/p/update",
      headers: headers(ctx),
      body: JSON.stringify(rto ? { waybill: req.trackingNumber, cancellation: "true" } : ndrBody(req)),
      signal: ctx.signal,
    });
    const no = refused(res.status, res.text);
    if (no) return no;
    throwForStatus("delhivery", res.status, { notFoundOn404: false });
    return rto ? parseCancelAnswer(res.text) : parseNdrAnswer(res.text);
  },
  async poll(reference, req, ctx) {
    const res = await ctx.http.request({
      path: `/api/cmu/get_bulk_upl/${encodeURIComponent(reference)}`,
      query: { verbose: "true" },
      headers: headers(ctx),
      signal: ctx.signal,
    });
    throwForStatus("delhivery", res.status, { notFoundOn404: false });
    const a = parseUplStatus(res.text, req.trackingNumber);
    return { ...a, reference };
  },
};
