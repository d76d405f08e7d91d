/**
 * The aged database of `bench:steady`: followed shipments with histories of 1–40 checkpoints (uniform), their
 * events and outbox rows over the last six weeks, and pending deliveries spread the way retries spread them.
 * The one file that knows the storage layout of the history: a schema change edits the COPY targets here. The
 * history is laid out as the service lays out a new one (modules/following/history.ts), chunk ids `4i + 1…`.
 */
import type { StoredCheckpoint } from "../src/domain/checkpoint.ts";
import { seeded } from "../test/helpers/history.ts";
import { latestReason } from "../src/modules/couriers/reasons.ts";
import { planHistory } from "../src/modules/following/history.ts";

const DAY = 86_400_000;
const COURIERS = ["delhivery", "bluedart", "dtdc", "ecomexpress", "xpressbees"] as const;
const DIGITS: Record<(typeof COURIERS)[number], number> = {
  delhivery: 12,
  bluedart: 10,
  dtdc: 10,
  ecomexpress: 11,
  xpressbees: 13,
};
const HUBS = [
  "Bhiwandi_Mh (Maharashtra)",
  "Delhi_Bamnoli_Dc (Delhi)",
  "Gurgaon_Bilaspur_HB (Haryana)",
  "Bangalore_Nelmngla_H (Karnataka)",
  "Kolkata_Dankuni_Hb (West Bengal)",
  "Hyderabad_Shamshabad_Pc (Telangana)",
  "Chennai_Porur_Dc (Tamil Nadu)",
  "Pune_Chakan_Pc (Maharashtra)",
  "Ahmedabad_Changodar_H (Gujarat)",
  "Jaipur_Sanganer_Dc (Rajasthan)",
  "Lucknow_Chinhat_H (Uttar Pradesh)",
  "Nagpur_Hub (Maharashtra)",
];
const ACTIVITIES = [
  ["Manifested", "X-UCI"],
  ["Shipment picked up", "X-PPOM"],
  ["Added to Bag", "X-DBL1F"],
  ["Bag Received at Facility", "X-IBD3F"],
  ["Shipment Received at Facility", "X-PIOM"],
  ["Bag added to Trip", "X-DLL2F"],
  ["Trip Arrived", "X-ILL1F"],
  ["Shipment further connected to destination hub", "X-DWS"],
  ["Dispatched for Delivery", "X-DDD3FD"],
  ["Consignee Unavailable", "EOD-11"],
] as const;
/** Chunks per courier: one per minute of the 8-hour interval (docs/rechecks.md, "Re-checks in chunks"). */
export const CHUNK_SLOTS = 480;
/** The chunk of shipment `i`: its courier's, at a minute spread over the interval. */
const chunkOf = (i: number) => (i % COURIERS.length) * CHUNK_SLOTS + Math.floor(((i * 7919) % 28_800) / 60) + 1;
const CITIES = ["Mumbai", "Delhi", "Bengaluru", "Kolkata", "Hyderabad", "Chennai", "Pune", "Ahmedabad", "Jaipur"];

export interface Generated {
  random: () => number;
  idOf: (i: number) => string;
  /** Indexes of shipments on the schedule generated so far (optionally only those with `len` checkpoints). */
  active: (len?: number) => number[];
}

interface Shape {
  len: number;
  terminal: boolean;
  courier: (typeof COURIERS)[number];
  createdMs: number;
}

/** The generator's state: per-shipment shapes are derived from the index, so slices can be generated apart. */
export function shipmentGenerator(o: { nowMs: number; accountIds: string[]; webhookIds: string[] }) {
  const random = seeded(0x5eed);
  const shapes: Shape[] = [];
  const shape = (i: number): Shape => {
    let s = shapes[i];
    if (!s) {
      const r = seeded(i * 2654435761);
      const len = 1 + Math.floor(r() * 40);
      // A month of follows: 29 % delivered and 3 % returned (terminal, off the schedule), the rest under way.
      const terminal = r() < 0.32;
      s = { len, terminal, courier: COURIERS[i % COURIERS.length]!, createdMs: o.nowMs - r() * 35 * DAY - DAY };
      shapes[i] = s;
    }
    return s;
  };
  const gen = {
    o,
    random,
    shape,
    idOf: (i: number) => `shp_steady${String(i).padStart(20, "0")}`,
    awbOf: (i: number) => `${String(i).padStart(DIGITS[shape(i).courier], "0")}1`,
    active: (len?: number) => {
      const out: number[] = [];
      for (let i = 0; i < shapes.length; i++) {
        const s = shapes[i]!;
        if (!s.terminal && (len === undefined || s.len === len)) out.push(i);
      }
      return out;
    },
  };
  return gen;
}

type Gen = ReturnType<typeof shipmentGenerator>;

/** The checkpoints of shipment `i`, oldest first: a walk through the hubs, ending delivered when terminal. */
export function history(g: Gen, i: number): StoredCheckpoint[] {
  const s = g.shape(i);
  const r = Math.imul(i, 40503) >>> 0;
  const step = (g.o.nowMs - 3_600_000 - s.createdMs) / Math.max(1, s.len);
  return Array.from({ length: s.len }, (_, k) => {
    const last = k === s.len - 1;
    const [activity, code] =
      last && s.terminal ? (["Delivered", "EOD-38"] as const) : ACTIVITIES[(r + k) % ACTIVITIES.length]!;
    const at = new Date(s.createdMs + k * step + ((r >> (k % 16)) % 3_000) * 1000).toISOString();
    const state = k === 0 ? "pending" : last && s.terminal ? "delivered" : "in_transit";
    return {
      state,
      subStatus: null,
      activity,
      location: HUBS[(r + k * 7) % HUBS.length]!,
      localDate: at.slice(0, 10),
      localTime: at.slice(11, 16),
      at,
      rawCode: code,
      rawStatus: state === "delivered" ? "Delivered" : k === 0 ? "Manifested" : "In Transit",
      remark: k % 5 === 4 ? `Bag ${(r % 900_000) + k}` : null,
    } satisfies StoredCheckpoint;
  });
}

/** Tail and sealed chunks of a history given oldest first, stored newest first as the service stores it. */
const layoutOf = (oldestFirst: StoredCheckpoint[]) =>
  planHistory({ checkpoints: [], current: false, tailLength: 0, chunks: [] }, [...oldestFirst].reverse());

const esc = (s: string) => s.replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n");
const iso = (ms: number) => new Date(ms).toISOString();

/** COPY targets and their lines for shipments [from, to): shipments, follows, the schedule, events and deliveries. */
export function rowsOfShipments(g: Gen, from: number, to: number): [string, Iterable<string>][] {
  const { nowMs, accountIds, webhookIds } = g.o;
  const evId = (i: number, k: number) => `evt_steady${String(i).padStart(18, "0")}${k}`;
  // Events: one per state change (picked up, and delivered when terminal), at its checkpoint's time.
  const eventsOf = (i: number) => {
    const cps = history(g, i);
    const out = [] as { k: number; type: string; status: string; at: number }[];
    if (cps.length > 1)
      out.push({ k: 0, type: "tracking.in_transit", status: "in_transit", at: Date.parse(cps[1]!.at) });
    if (g.shape(i).terminal && cps.length > 1)
      out.push({ k: 1, type: "tracking.delivered", status: "delivered", at: Date.parse(cps.at(-1)!.at) });
    return out;
  };
  return [
    [
      "shipments (id, courier, tracking_number, state, most_recent_status, history_tail, history_chunks, history_at, checkpoint_count, origin_city, destination_city, terminal, followers, last_checked_at, created_at, updated_at, delivered_at, reason_code, additional_info)",
      (function* () {
        for (let i = from; i < to; i++) {
          const s = g.shape(i);
          const cps = history(g, i);
          const lastCp = cps.at(-1)!;
          const layout = layoutOf(cps);
          // Stored as the store keeps them (newest first, with the newest reason), so an unchanged answer is one.
          const stored = [...cps].reverse();
          yield [
            g.idOf(i),
            s.courier,
            g.awbOf(i),
            lastCp.state,
            lastCp.state === "delivered"
              ? "Delivered"
              : lastCp.state === "pending"
                ? "Order information received"
                : "In transit",
            esc(JSON.stringify(layout.tail)),
            layout.seal.length ? `{${layout.seal.map((_, k) => 4 * i + 1 + k).join(",")}}` : "\\N",
            iso(Date.parse(lastCp.at)),
            cps.length,
            CITIES[i % CITIES.length],
            CITIES[(i * 7 + 3) % CITIES.length],
            s.terminal ? "t" : "f",
            1,
            iso(nowMs - 3_600_000),
            iso(s.createdMs),
            iso(Date.parse(lastCp.at)),
            s.terminal ? lastCp.at : "\\N",
            latestReason(s.courier, stored) ?? "\\N",
            stored[0]!.remark === null ? "\\N" : esc(stored[0]!.remark),
          ].join("\t");
        }
      })(),
    ],
    [
      "shipment_checkpoint_chunks (id, shipment_id, checkpoints)",
      (function* () {
        for (let i = from; i < to; i++)
          for (const [k, chunk] of layoutOf(history(g, i)).seal.entries())
            yield `${4 * i + 1 + k}\t${g.idOf(i)}\t${esc(JSON.stringify(chunk))}`;
      })(),
    ],
    [
      "follows (account_id, shipment_id, created_at)",
      (function* () {
        for (let i = from; i < to; i++)
          yield `${accountIds[i % accountIds.length]}\t${g.idOf(i)}\t${iso(g.shape(i).createdMs)}`;
      })(),
    ],
    [
      "recheck_chunks (id, courier, due_at, last_run_at)",
      (function* () {
        // Steady state: one chunk per courier and minute of the next 8 hours (3 re-checks a day).
        if (from === 0)
          for (const [c, courier] of COURIERS.entries())
            for (let slot = 0; slot < CHUNK_SLOTS; slot++)
              yield `${c * CHUNK_SLOTS + slot + 1}\t${courier}\t${iso(nowMs + slot * 60_000)}\t${iso(nowMs - 3_600_000)}`;
      })(),
    ],
    [
      "recheck_schedule (shipment_id, courier, tracking_number, chunk_id)",
      (function* () {
        for (let i = from; i < to; i++) {
          const s = g.shape(i);
          if (s.terminal) continue;
          yield `${g.idOf(i)}\t${s.courier}\t${g.awbOf(i)}\t${chunkOf(i)}`;
        }
      })(),
    ],
    [
      "events (id, shipment_id, type, status, enqueued_at, created_at)",
      (function* () {
        for (let i = from; i < to; i++)
          for (const e of eventsOf(i))
            yield `${evId(i, e.k)}\t${g.idOf(i)}\t${e.type}\t${e.status}\t${iso(e.at)}\t${iso(e.at)}`;
      })(),
    ],
    [
      "deliveries (id, webhook_id, account_id, event_id, shipment_id, event_type, mode, state, attempts, next_attempt_at, enqueued_at, last_status_code, created_at, updated_at)",
      (function* () {
        for (let i = from; i < to; i++) {
          const acc = i % accountIds.length;
          for (const e of eventsOf(i)) {
            // 1 outbox row in 40 is still pending: most from the last hour, the rest retries of older events.
            const pending = i % 40 === 7;
            const created = pending && i % 5 !== 0 ? nowMs - ((i * 31) % 3_600) * 1000 : e.at;
            yield [
              `dlv_steady${String(i).padStart(18, "0")}${e.k}`,
              webhookIds[acc],
              accountIds[acc],
              evId(i, e.k),
              g.idOf(i),
              e.type,
              "live",
              pending ? "pending" : "delivered",
              pending ? 2 : 1,
              pending ? iso(nowMs - 60_000) : "\\N",
              iso(created),
              pending ? 500 : 200,
              iso(created),
              iso(created),
            ].join("\t");
          }
        }
      })(),
    ],
  ];
}
