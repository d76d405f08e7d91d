/**
 * The Delhivery twin's action APIs (README.md, "NDR actions"): the NDR API queues a request and answers a UPL id at
 * once; the decision, taken on the shipment as it stands then, shows on the status API after SANDBOX_ASYNC_SECONDS.
 * It refuses what Delhivery's docs refuse (status codes, the 6-day defer window, EDIT_DETAILS outside "Pending").
 * An accepted action moves the shipment: a new attempt a step later, delivered when the digit before the AWB's
 * last is even, failed again when odd; a cancellation turns it into a return (RT), back with the shipper two steps on.
 */
import { Value } from "@sinclair/typebox/value";
import { rememberBounded } from "../../../../twin-kit/bounded.ts";
import { sandboxCredential } from "../../../../twin-kit/credentials.ts";
import { wallTime, type Scenario, type SimEvent } from "../../../../twin-kit/scenario.ts";
import type { SimContext } from "../../../../twin-kit/twin.ts";
import { DEFER_CODES, MAX_DEFER_DAYS, REATTEMPT_CODES } from "./actions.ts";
import {
  DelhiveryNdrRequest,
  type DelhiveryScan,
  type DelhiveryCancelAnswer,
  type DelhiveryNdrAnswer,
  type DelhiveryUplStatus,
} from "./wire.ts";

type Act = "RE-ATTEMPT" | "DEFER_DLV" | "EDIT_DETAILS" | "RTO";
interface Move {
  act: Act;
  /** When asked, and when the decision takes effect (ms). */
  at: number;
  decidedAt: number;
  ok: boolean;
  remark: string;
  deferredDate?: string;
  upl?: string;
}
type Found = Extract<Scenario, { kind: "found" }>;
/** The twin's rendering of one event (twin.ts), passed in: this file and twin.ts import nothing of each other's but this. */
type Render = (e: SimEvent) => Required<DelhiveryScan>;

/** Twin id the action calls are counted under (`sim.calls("delhivery-actions", awb)`). */
export const ACTION_COUNTER = "delhivery-actions";
const HOUR = 3_600_000;

/** The twin's map `key` in the simulator's scratch state, created on first use. */
function mapOf<V>(sim: SimContext, key: string): Map<string, V> {
  const found = sim.state.get(key) as Map<string, V> | undefined;
  if (found) return found;
  const m = new Map<string, V>();
  sim.state.set(key, m);
  return m;
}
const movesOf = (sim: SimContext) => mapOf<Move[]>(sim, "delhivery:moves");
const uplsOf = (sim: SimContext) => mapOf<{ awb: string; move: Move }>(sim, "delhivery:upl");

/** Whether a new attempt after an action delivers: the digit before the AWB's last is even. */
function reattemptDelivers(awb: string): boolean {
  const m = /(\d)\d\D*$/.exec(awb);
  return m ? Number(m[1]) % 2 === 0 : true;
}

const istDateMs = (day: string, hh: number) => Date.parse(`${day}T00:00:00Z`) - 330 * 60_000 + hh * HOUR;

/** The scenario's visible events with the accepted actions applied (what the tracking answer shows now). */
export function eventsWithActions(awb: string, s: Found, sim: SimContext): SimEvent[] {
  const now = sim.now();
  const step = sim.stepSeconds * 1000;
  let events = s.events;
  for (const m of movesOf(sim).get(awb) ?? []) {
    if (!m.ok || m.decidedAt > now) continue;
    // The script after the request is replaced by what the action leads to.
    events = events.filter((e) => e.at <= m.at);
    const failed = events.findLast((e) => e.kind === "delivery_failed");
    const next: SimEvent[] = [];
    if (m.act === "RTO") {
      next.push({
        kind: "rto_initiated",
        at: m.decidedAt,
        location: s.destination,
        remark: "Returned as per Client Instructions",
      });
      next.push({ kind: "returned", at: m.decidedAt + 2 * step, location: s.origin, remark: null });
    } else {
      const ofd = m.deferredDate ? Math.max(m.decidedAt + step, istDateMs(m.deferredDate, 9)) : m.decidedAt + step;
      next.push({ kind: "out_for_delivery", at: ofd, location: s.destination, remark: null });
      next.push(
        reattemptDelivers(awb)
          ? { kind: "delivered", at: ofd + step, location: s.destination, remark: null }
          : { kind: "delivery_failed", at: ofd + step, location: s.destination, remark: failed?.remark ?? null },
      );
    }
    events = [...events, ...next.filter((e) => e.at <= now)];
  }
  return events;
}

/** Delhivery's refusal of `act` on the shipment as it stands, or undefined when it accepts. */
function refusal(awb: string, act: Act, sim: SimContext, render: Render, deferredDate?: string): string | undefined {
  const s = sim.scenario(awb);
  if (s.kind !== "found") return "No such waybill found";
  const events = eventsWithActions(awb, s, sim);
  const last = events.at(-1);
  if (!last) return "Package not found in pending status";
  const r = render(last);
  const scan = { ScanType: String(r.ScanType), Scan: String(r.Scan), StatusCode: String(r.StatusCode) };
  if ((movesOf(sim).get(awb) ?? []).some((m) => m.decidedAt > sim.now()))
    return "A request for this waybill is already being processed";
  if (act === "RTO")
    return scan.ScanType === "UD" && ["Manifested", "In Transit", "Pending"].includes(scan.Scan)
      ? undefined
      : `Shipment cannot be cancelled in ${scan.Scan} status`;
  if (scan.ScanType !== "UD" || scan.Scan !== "Pending") return "Package is not in Pending status";
  if (act === "RE-ATTEMPT" && !(REATTEMPT_CODES as readonly string[]).includes(scan.StatusCode))
    return `RE-ATTEMPT not allowed for status code ${scan.StatusCode}`;
  if (act === "DEFER_DLV") {
    if (!(DEFER_CODES as readonly string[]).includes(scan.StatusCode))
      return `DEFER_DLV not allowed for status code ${scan.StatusCode}`;
    if (!deferredDate || !/^\d{4}-\d{2}-\d{2}$/.test(deferredDate)) return "Invalid deferred_date";
    const firstPending = events.find((e) => e.kind === "delivery_failed");
    const first = wallTime(firstPending?.at ?? last.at, 330).date;
    const max = new Date(Date.parse(`${first}T00:00:00Z`) + MAX_DEFER_DAYS * 86_400_000).toISOString().slice(0, 10);
    if (deferredDate > max) return `deferred_date exceeds max_dfd_allowed ${max}`;
    if (deferredDate <= wallTime(sim.now(), 330).date) return "deferred_date must be in the future";
  }
  return undefined;
}

function record(sim: SimContext, awb: string, move: Move): void {
  const moves = movesOf(sim);
  rememberBounded(moves, awb, [...(moves.get(awb) ?? []), move]);
}

let uplSeq = 0;
const json = <T>(body: T, status = 200) => Response.json(body, { status });

/** Answers an action call; undefined when `url` is none of the action APIs. */
export async function handleAction(
  req: Request,
  url: URL,
  sim: SimContext,
  render: Render,
): Promise<Response | undefined> {
  const path = url.pathname.replace(/^\/delhivery/, "");
  if (req.headers.get("authorization") !== `Token ${sandboxCredential("DELHIVERY_TOKEN")}`) return undefined;
  if (req.method === "POST" && path === "/api/p/update") {
    const body = await req.json().catch(() => undefined);
    if (!Value.Check(DelhiveryNdrRequest, body)) return json({ error: "Invalid request body", success: false }, 400);
    const upl = `UPL${Date.now()}${String(++uplSeq).padStart(6, "0")}`;
    const now = sim.now();
    for (const item of body.data) {
      sim.count(ACTION_COUNTER, item.waybill);
      const deferredDate = item.action_data?.deferred_date;
      const why = refusal(item.waybill, item.act, sim, render, deferredDate);
      const move: Move = {
        act: item.act,
        at: now,
        decidedAt: now + sim.asyncSeconds * 1000,
        ok: why === undefined,
        remark: why ?? "Request processed successfully",
        upl,
        ...(item.act === "DEFER_DLV" ? { deferredDate } : {}),
      };
      record(sim, item.waybill, move);
      rememberBounded(uplsOf(sim), `${upl}:${item.waybill}`, { awb: item.waybill, move });
    }
    return json({ request_id: upl, success: true } satisfies DelhiveryNdrAnswer);
  }
  const status = /^\/api\/cmu\/get_bulk_upl\/([^/]+)$/.exec(path);
  if (req.method === "GET" && status) {
    const upl = decodeURIComponent(status[1] ?? "");
    const rows = [...uplsOf(sim).entries()].filter(([k]) => k.startsWith(`${upl}:`)).map(([, v]) => v);
    if (rows.length === 0) return json({ error: "Invalid UPL id" }, 404);
    const done = rows.every((r) => r.move.decidedAt <= sim.now());
    const answer: DelhiveryUplStatus = done
      ? {
          status: "Complete",
          request_id: upl,
          result: rows.map((r) => ({
            waybill: r.awb,
            status: r.move.ok ? "Success" : "Failure",
            remark: r.move.remark,
          })),
        }
      : { status: "Pending", request_id: upl };
    return json(answer);
  }
  if (req.method === "POST" && path === "/api/p/edit") {
    const body = (await req.json().catch(() => undefined)) as { waybill?: unknown; cancellation?: unknown } | undefined;
    const awb = typeof body?.waybill === "string" ? body.waybill : "";
    if (!awb || body?.cancellation !== "true") return json({ error: "Invalid request body", status: false }, 400);
    sim.count(ACTION_COUNTER, awb);
    const why = refusal(awb, "RTO", sim, render);
    if (!why) record(sim, awb, { act: "RTO", at: sim.now(), decidedAt: sim.now(), ok: true, remark: "" });
    const answer: DelhiveryCancelAnswer = why
      ? { status: false, waybill: awb, remark: why }
      : { status: true, waybill: awb, remark: "Shipment has been cancelled." };
    return json(answer);
  }
  return undefined;
}
