/** The lease heartbeat of a claimer that holds rows longer than one lease (docs/architecture.md, "Job runner"). */
import type postgres from "postgres";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import type { Queue } from "./queue.ts";

/** A held row and its lease end, ms since the epoch. */
export interface HeldLease {
  id: string;
  leaseUntilMs: number;
}

export interface LeaseKeeper {
  /** Renews every held row's lease to now + leaseMs, ONE statement. @throws whatever the database throws. */
  renew(): Promise<void>;
  start(): void;
  stop(): void;
}

/** The heartbeat of a live claimer: its rows stay leased while held; a dead claimer's come free within one lease. */
export function createLeaseKeeper<Row>(o: {
  queue: Queue<Row>;
  sql: postgres.Sql;
  clock: Clock;
  owner: string;
  leaseMs: number;
  held: () => HeldLease[];
  log: Logger;
}): LeaseKeeper {
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  async function renew(): Promise<void> {
    const held = o.held();
    if (held.length === 0) return;
    const until = o.clock.now() + o.leaseMs;
    const renewed = new Set(
      await o.queue.renew(
        o.sql,
        held.map((r) => r.id),
        o.owner,
        until,
      ),
    );
    for (const r of held) if (renewed.has(r.id)) r.leaseUntilMs = Math.max(r.leaseUntilMs, until);
  }
  const beat = () =>
    void renew().catch((e) =>
      o.log.warn("leases not renewed; they run out unless the next renewal succeeds", {
        queue: o.queue.table,
        owner: o.owner,
        error: e as Error,
      }),
    );
  return {
    renew,
    start() {
      heartbeat ??= setInterval(beat, Math.max(1, Math.floor(o.leaseMs / 3)));
      heartbeat.unref?.();
    },
    stop() {
      clearInterval(heartbeat);
      heartbeat = undefined;
    },
  };
}
