/**
 * The delivery worker's claimer ("pump"): keeps up to `concurrency` attempts
 * in flight while due outbox rows exist, with up to `prefetch` more rows
 * claimed and waiting for a slot, so a finishing attempt's slot is filled at
 * once instead of after a claim round trip. It claims again as soon as
 * `refillAt` rows would fit (the high-water mark is `concurrency + prefetch`),
 * so one claim statement serves many finished attempts and the pipeline never
 * drains to refill. Waiting rows hold their lease like rows being sent; a row
 * that waited longer than `maxWaitMs` (slow receivers holding every slot) is
 * not started, since its attempt might outlast the lease, and goes to
 * `release` instead; rows never started when the pump stops are handed back
 * ({@link DeliveryPump.unstarted}) for their leases to be released.
 *
 * It has no timer of its own: a NOTIFY, the scheduler's poll
 * (WEBHOOK_POLL_SECONDS) and finishing attempts call {@link DeliveryPump.wake}.
 */
import type postgres from "postgres";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/log.ts";
import { claimDue, type ClaimedDelivery } from "./outbox.ts";

export interface DeliveryPump {
  /**
   * Forgets that the last claim came back short and claims what is due now (by the clock).
   * Resolves when this pass is over, attempts still running. Never throws: a failed claim
   * (database down or restarting) is logged and claims pause, 1 s doubling to 30 s.
   */
  wake(): Promise<void>;
  /** Starts (true) or stops (false) claiming and starting attempts; attempts in flight go on. */
  setRunning(on: boolean): void;
  /** The attempts in flight now (each settles once its attempt is made, see `deliver`). */
  inFlight(): Promise<void>[];
  /** Waits for the claim in progress, then takes the claimed rows no attempt was started for. */
  unstarted(): Promise<ClaimedDelivery[]>;
}

export interface PumpOptions {
  sql: postgres.Sql;
  clock: Clock;
  log: Logger;
  /** Attempts in flight at once at most. */
  concurrency: number;
  /** Claimed rows waiting for a slot at most, on top of `concurrency`. */
  prefetch: number;
  /** Rows that must fit below the high-water mark before a claim is made. */
  refillAt: number;
  /** Lease of each claim, ms. */
  leaseMs: number;
  /** How long a claimed row may wait for a slot, ms (by `clock`); the lease must still cover a whole attempt after it. */
  maxWaitMs: number;
  /** Hands back claimed rows that waited too long (their leases to be cleared). Must not reject. */
  release: (rows: ClaimedDelivery[]) => Promise<unknown>;
  /** Runs one claimed delivery; its slot is free when the promise settles. Must not reject. */
  deliver: (row: ClaimedDelivery) => Promise<void>;
}

/** Creates a pump; it claims nothing until `setRunning(true)` and a `wake()`. */
export function createDeliveryPump(o: PumpOptions): DeliveryPump {
  const inFlight = new Set<Promise<void>>();
  const ready: { row: ClaimedDelivery; claimedAt: number }[] = [];
  const highWater = o.concurrency + o.prefetch;
  let running = false;
  let pass: Promise<void> | undefined;
  let again = false;
  // The last claim came back short: nothing more is due until a NOTIFY or the poll says otherwise,
  // so finishing attempts do not each send a claim that finds nothing.
  let drained = false;
  let backoffMs = 0;
  let pausedUntil = 0;

  function startReady(): void {
    let stale: ClaimedDelivery[] | undefined;
    while (running && ready.length > 0 && inFlight.size < o.concurrency) {
      const { row, claimedAt } = ready.shift()!;
      if (o.clock.now() - claimedAt > o.maxWaitMs) (stale ??= []).push(row);
      else track(o.deliver(row));
    }
    if (stale) void o.release(stale);
  }

  function track(p: Promise<void>): void {
    inFlight.add(p);
    p.finally(() => {
      inFlight.delete(p);
      startReady();
      if (running && !drained) void pump();
    });
  }

  const room = () => highWater - inFlight.size - ready.length;

  function pump(): Promise<void> {
    if (pass) {
      again = true;
      return pass;
    }
    if (Date.now() < pausedUntil) return Promise.resolve();
    pass = claimWhileRoom().finally(() => (pass = undefined));
    return pass;
  }

  async function claimWhileRoom(): Promise<void> {
    try {
      do {
        again = false;
        while (running && !drained && room() >= o.refillAt) {
          const want = room();
          const claimedAt = o.clock.now();
          const rows = await claimDue(o.sql, claimedAt, want, o.leaseMs);
          backoffMs = 0;
          for (const row of rows) ready.push({ row, claimedAt });
          startReady();
          if (rows.length < want) drained = true;
        }
      } while (again && running);
    } catch (e) {
      // Database down or restarting: back off (1 s doubling to 30 s); the poll resumes us.
      backoffMs = Math.min(30_000, Math.max(1_000, backoffMs * 2));
      pausedUntil = Date.now() + backoffMs;
      o.log.warn("delivery claim failed; backing off", { ms: backoffMs, error: e as Error });
    }
  }

  return {
    wake() {
      drained = false;
      return pump();
    },
    setRunning(on) {
      running = on;
      startReady();
    },
    inFlight: () => [...inFlight],
    async unstarted() {
      await pass;
      return ready.splice(0).map((r) => r.row);
    },
  };
}
