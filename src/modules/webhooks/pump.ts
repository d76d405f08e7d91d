/**
 * The delivery worker's claimer ("pump"): keeps up to `concurrency` attempts
 * in flight while due outbox rows exist. It claims again once `refillAt`
 * slots are free, so the next batch is claimed while the rest of the pipeline
 * still runs and one claim statement serves many finished attempts.
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
  /** Starts (true) or stops (false) claiming; attempts in flight go on. */
  setRunning(on: boolean): void;
  /** The attempts in flight now (each settles once its outcome is recorded or given up). */
  inFlight(): Promise<void>[];
}

export interface PumpOptions {
  sql: postgres.Sql;
  clock: Clock;
  log: Logger;
  /** Attempts in flight at once at most. */
  concurrency: number;
  /** Free slots that trigger a claim. */
  refillAt: number;
  /** Lease of each claim, ms. */
  leaseMs: number;
  /** Runs one claimed delivery to its recorded outcome; must not reject. */
  deliver: (row: ClaimedDelivery) => Promise<void>;
}

/** Creates a pump; it claims nothing until `setRunning(true)` and a `wake()`. */
export function createDeliveryPump(o: PumpOptions): DeliveryPump {
  const inFlight = new Set<Promise<void>>();
  let running = false;
  let pumping = false;
  let again = false;
  // The last claim came back short: nothing more is due until a NOTIFY or the poll says otherwise,
  // so finishing attempts do not each send a claim that finds nothing.
  let drained = false;
  let backoffMs = 0;
  let pausedUntil = 0;

  function track(p: Promise<void>): void {
    inFlight.add(p);
    p.finally(() => {
      inFlight.delete(p);
      if (running && !drained) void pump();
    });
  }

  async function pump(): Promise<void> {
    if (pumping) {
      again = true;
      return;
    }
    if (Date.now() < pausedUntil) return;
    pumping = true;
    try {
      do {
        again = false;
        while (running && !drained && o.concurrency - inFlight.size >= o.refillAt) {
          const want = o.concurrency - inFlight.size;
          const rows = await claimDue(o.sql, o.clock.now(), want, o.leaseMs);
          backoffMs = 0;
          for (const r of rows) track(o.deliver(r));
          if (rows.length < want) drained = true;
        }
      } while (again && running);
    } catch (e) {
      // Database down or restarting: back off (1 s doubling to 30 s); the poll resumes us.
      backoffMs = Math.min(30_000, Math.max(1_000, backoffMs * 2));
      pausedUntil = Date.now() + backoffMs;
      o.log.warn("delivery claim failed; backing off", { ms: backoffMs, error: e as Error });
    } finally {
      pumping = false;
    }
  }

  return {
    wake() {
      drained = false;
      return pump();
    },
    setRunning(on) {
      running = on;
    },
    inFlight: () => [...inFlight],
  };
}
