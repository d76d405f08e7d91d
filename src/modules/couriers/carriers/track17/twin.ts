/** 17TRACK v2.2 twin: register, then `gettrackinfo` is "not ready" until `sim.asyncSeconds` pass. */
import { rememberBounded } from "../../../../twin-kit/bounded.ts";
import { sandboxCredential } from "../../../../twin-kit/credentials.ts";
import type {
  Track17Accepted,
  Track17Address,
  Track17Envelope,
  Track17Estimate,
  Track17Event,
  Track17Rejected,
  Track17TrackInfo,
} from "./wire.ts";
import { wallTime, type Scenario, type SimEvent, type SimEventKind } from "../../../../twin-kit/scenario.ts";
import type { SimContext, Twin } from "../../../../twin-kit/twin.ts";

const REG_KEY = "track17:registrations";

const RENDER: Record<SimEventKind, { stage: string | null; sub: string; text: string }> = {
  manifested: { stage: "InfoReceived", sub: "InfoReceived", text: "Shipment information received" },
  picked_up: { stage: "PickedUp", sub: "InTransit_PickedUp", text: "Picked up by the carrier" },
  in_transit: { stage: "Departure", sub: "InTransit_Other", text: "Departed from facility" },
  reached_destination: { stage: "Arrival", sub: "InTransit_Arrival", text: "Arrived at destination facility" },
  out_for_delivery: { stage: "OutForDelivery", sub: "OutForDelivery_Other", text: "Out for delivery" },
  delivered: { stage: "Delivered", sub: "Delivered_Other", text: "Delivered" },
  delivery_failed: { stage: null, sub: "DeliveryFailure_NoBody", text: "Delivery attempt failed" },
  rto_initiated: { stage: "Returning", sub: "Exception_Returning", text: "Returning to sender" },
  returned: { stage: "Returned", sub: "Exception_Returned", text: "Returned to sender" },
  cancelled: { stage: null, sub: "Exception_Cancel", text: "Shipment cancelled" },
};

const nullAddress = (city: string | null = null, country: string | null = null): Track17Address => ({
  country,
  state: null,
  city,
  street: null,
  postal_code: null,
  coordinates: { longitude: null, latitude: null },
});

function eventOf(e: SimEvent): Track17Event & { time_iso: string; time_utc: string; sub_status: string } {
  const r = RENDER[e.kind];
  return {
    time_iso: wallTime(e.at, 330).iso,
    time_utc: new Date(e.at).toISOString().replace(/\.\d{3}Z$/, "Z"),
    description: e.remark ? `${r.text}: ${e.remark}` : r.text,
    location: e.location,
    stage: r.stage,
    sub_status: r.sub,
    address: nullAddress(e.location, "IN"),
  };
}

const MILESTONES = [
  "InfoReceived",
  "PickedUp",
  "Departure",
  "Arrival",
  "AvailableForPickup",
  "OutForDelivery",
  "Delivered",
  "Returning",
  "Returned",
];

const estimateOf = (edd: string | null | undefined): Track17Estimate =>
  edd
    ? { source: "Official", from: `${edd}T09:00:00+05:30`, to: `${edd}T18:00:00+05:30` }
    : { source: null, from: null, to: null };

function trackInfo(
  carrier: number,
  status: string,
  subStatus: string,
  events: ReturnType<typeof eventOf>[],
  synced: boolean,
  shipping?: { origin: string; destination: string; edd?: string | null },
): Track17TrackInfo {
  return {
    shipping_info: {
      shipper_address: nullAddress(shipping?.origin ?? null, shipping ? "IN" : null),
      recipient_address: nullAddress(shipping?.destination ?? null, shipping ? "IN" : null),
    },
    latest_status: { status, sub_status: subStatus, sub_status_descr: null },
    latest_event: events[0] ?? null,
    time_metrics: {
      days_after_order: 0,
      days_of_transit: 0,
      days_of_transit_done: 0,
      days_after_last_update: 0,
      estimated_delivery_date: estimateOf(shipping?.edd),
    },
    milestone: MILESTONES.map((key_stage) => {
      const e = events.find((x) => x.stage === key_stage);
      return { key_stage, time_iso: e?.time_iso ?? null, time_utc: e?.time_utc ?? null };
    }),
    misc_info: {
      risk_factor: 0,
      service_type: null,
      weight_raw: null,
      weight_kg: null,
      pieces: null,
      dimensions: null,
      customer_number: null,
      reference_number: null,
      local_number: null,
      local_provider: null,
      local_key: 0,
    },
    tracking: {
      providers_hash: synced ? carrier : 0,
      providers: synced
        ? [
            {
              provider: {
                key: carrier,
                name: "Sandbox Courier",
                alias: "Sandbox Courier",
                tel: null,
                homepage: "https://sandbox.example",
                country: "IN",
              },
              service_type: null,
              latest_sync_status: "Success",
              latest_sync_time: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
              events_hash: events.length,
              events,
            },
          ]
        : [],
    },
  };
}

function rendered(s: Scenario, carrier: number) {
  if (s.kind !== "found") return trackInfo(carrier, "NotFound", "NotFound_Other", [], true);
  if (s.noScans) return trackInfo(carrier, "InfoReceived", "InfoReceived", [], true, s);
  const events = s.events.map(eventOf).reverse(); // newest first, as 17TRACK lists them
  const newest = events[0];
  if (!newest) throw new Error("scenario without a visible event");
  const sub = newest.sub_status;
  return trackInfo(carrier, sub.split("_")[0] ?? sub, sub, events, true, s);
}

function registrations(sim: SimContext): Map<string, { at: number; carrier: number }> {
  let m = sim.state.get(REG_KEY) as Map<string, { at: number; carrier: number }> | undefined;
  if (!m) {
    m = new Map();
    sim.state.set(REG_KEY, m);
  }
  return m;
}

const answer = (body: Track17Envelope, status = 200) => Response.json(body, { status });
const envelope = (accepted: Track17Accepted[], rejected: Track17Rejected[]) =>
  answer({ code: 0, data: { accepted, rejected } });
const reject = (number: string, code: number, message: string): Track17Rejected => ({
  number,
  error: { code, message },
});

export const track17Twin: Twin = {
  id: "track17",
  async handle(req, url, sim) {
    if (req.headers.get("17token") !== sandboxCredential("TRACK17_API_KEY"))
      return answer(
        { code: -18010002, data: { errors: [{ code: -18010002, message: "The access key is invalid." }] } },
        401,
      );
    const op = /\/track\/v2\.2\/(register|gettrackinfo)$/.exec(url.pathname)?.[1];
    if (req.method !== "POST" || !op)
      return answer({ code: -18010013, data: { errors: [{ code: -18010013, message: "Unknown endpoint." }] } }, 404);
    let items: { number?: unknown; carrier?: unknown }[];
    try {
      items = (await req.json()) as typeof items;
      if (!Array.isArray(items)) throw new Error("not an array");
    } catch {
      return answer({
        code: -18010013,
        data: { errors: [{ code: -18010013, message: "Submitted data is invalid." }] },
      });
    }
    const numbers = items.map((i) => ({ number: String(i?.number ?? ""), carrier: Number(i?.carrier) || 0 }));
    for (const n of numbers) sim.count("track17", `${op}:${n.number}`);
    const gated = numbers[0] ? await sim.gate(numbers[0].number) : undefined;
    if (gated) return gated;
    const regs = registrations(sim);
    const accepted: Track17Accepted[] = [];
    const rejected: Track17Rejected[] = [];
    for (const { number, carrier } of numbers) {
      if (!/^[0-9A-Za-z]{5,50}$/.test(number)) {
        rejected.push(reject(number, -18010012, `The format of '${number}' is invalid.`));
        continue;
      }
      const reg = regs.get(number);
      if (op === "register") {
        if (reg)
          rejected.push(
            reject(
              number,
              -18019901,
              `The tracking number '${number}' has been registered, don't need to repeat registration.`,
            ),
          );
        else {
          rememberBounded(regs, number, { at: performance.now(), carrier });
          accepted.push({ origin: 1, number, carrier, email: null, tag: null, lang: null });
        }
        continue;
      }
      if (!reg) {
        rejected.push(
          reject(number, -18019902, `The tracking number '${number}' does not register, please register first.`),
        );
        continue;
      }
      const ready = performance.now() - reg.at >= sim.asyncSeconds * 1000;
      const track_info = ready
        ? rendered(sim.scenario(number), reg.carrier)
        : trackInfo(reg.carrier, "NotFound", "NotFound_Other", [], false);
      accepted.push({ number, carrier: reg.carrier, param: null, tag: null, track_info });
    }
    return envelope(accepted, rejected);
  },
};
