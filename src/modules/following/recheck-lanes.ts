/** Per-backend lanes of the re-check runner and the claimer filling them (docs/rechecks.md, "The runner"). */
import { COURIERS, courierBySlug } from "../couriers/catalogue.ts";
import { claimDueShipments, type ClaimedShipment } from "./claims.ts";
import type { Db } from "../../db/client.ts";
import type { Clock } from "../../lib/clock.ts";
import type { ChunkWalk } from "./chunk-walk.ts";

export interface Held extends ClaimedShipment {
  /** Lease end, ms since the epoch. */
  leaseUntilMs: number;
}

export interface CourierLanes {
  /** Queues claimed rows in their backend's lane and starts what fits; a row already held keeps its place. */
  add(rows: Held[]): void;
  heldRows(): Held[];
  /** Courier slugs whose backend lane is full. */
  saturated(): string[];
  held(): number;
  running(): Promise<void>[];
  /** Starts nothing more; takes the queued rows out and returns them (the caller gives them back). */
  stop(): Held[];
}

interface Lane {
  active: number;
  queue: Held[];
}

export function createCourierLanes(opts: {
  perLane: number;
  laneCap: number;
  run: (row: Held) => Promise<void>;
}): CourierLanes {
  const lanes = new Map<string, Lane>();
  const running = new Set<Promise<void>>();
  const heldById = new Map<string, Held>();
  let stopping = false;

  const laneOf = (adapter: string) => {
    let l = lanes.get(adapter);
    if (!l) {
      l = { active: 0, queue: [] };
      lanes.set(adapter, l);
    }
    return l;
  };

  function kick(lane: Lane): void {
    while (!stopping && lane.active < opts.perLane && lane.queue.length > 0) {
      const row = lane.queue.shift()!;
      lane.active++;
      const p: Promise<void> = opts.run(row).finally(() => {
        lane.active--;
        heldById.delete(row.id);
        running.delete(p);
        kick(lane);
      });
      running.add(p);
    }
  }

  return {
    add(rows) {
      const touched = new Set<Lane>();
      for (const r of rows) {
        const mine = heldById.get(r.id);
        if (mine) {
          mine.leaseUntilMs = Math.max(mine.leaseUntilMs, r.leaseUntilMs);
          continue;
        }
        heldById.set(r.id, r);
        const lane = laneOf(courierBySlug(r.courier)?.adapter ?? "unknown");
        lane.queue.push(r);
        touched.add(lane);
      }
      for (const l of touched) kick(l);
    },
    saturated() {
      const full = new Set<string>();
      for (const [a, l] of lanes) if (l.active + l.queue.length >= opts.laneCap) full.add(a);
      return full.size ? COURIERS.filter((c) => full.has(c.adapter)).map((c) => c.slug) : [];
    },
    held: () => heldById.size,
    heldRows: () => [...heldById.values()],
    running: () => [...running],
    stop() {
      stopping = true;
      const queued: Held[] = [];
      for (const l of lanes.values()) queued.push(...l.queue.splice(0));
      for (const r of queued) heldById.delete(r.id);
      return queued;
    },
  };
}

export interface Claimer {
  /** One claim statement for what the lanes have room for; returns rows claimed (0 when skipped). */
  claim(): Promise<number>;
  reset(): void;
}

/** The claimer filling `lanes`; an empty claim is not repeated within 1 s while the same lanes are full. @throws on DB errors. */
export function createClaimer(o: {
  db: Db;
  clock: Clock;
  owner: string;
  leaseMs: number;
  claimLimit: number;
  maxHeld: number;
  lanes: CourierLanes;
  walk?: ChunkWalk;
}): Claimer {
  let lastEmpty: { excluded: Set<string>; at: number } | undefined;
  return {
    async claim() {
      const room = o.maxHeld - o.lanes.held();
      if (room <= 0) return 0;
      const excluded = o.lanes.saturated();
      if (
        lastEmpty &&
        performance.now() - lastEmpty.at < 1000 &&
        [...lastEmpty.excluded].every((c) => excluded.includes(c))
      )
        return 0;
      const nowMs = o.clock.now();
      const rows = await claimDueShipments(o.db, nowMs, Math.min(o.claimLimit, room), o.leaseMs, o.owner, {
        excludeCouriers: excluded,
        walk: o.walk,
      });
      lastEmpty = rows.length === 0 ? { excluded: new Set(excluded), at: performance.now() } : undefined;
      o.lanes.add(rows.map((r) => ({ ...r, leaseUntilMs: nowMs + o.leaseMs })));
      return rows.length;
    },
    reset() {
      lastEmpty = undefined;
    },
  };
}
