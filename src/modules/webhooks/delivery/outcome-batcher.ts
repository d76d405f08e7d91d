/** The delivery worker's outcome batcher: outcomes finishing while a batch is written wait for the next (group commit). */
import type postgres from "postgres";
import type { Clock } from "../../../lib/clock.ts";
import { recordOutcomes, type ClaimedDelivery, type Outcome, type OutcomeItem } from "./outbox.ts";

export interface RecordResult {
  /** False when the lease was lost before recording (the new owner records). */
  recorded: boolean;
  /** True on the one outcome that deactivated the row's webhook. */
  deactivated: boolean;
}

export interface OutcomeBatcher {
  /** Queues one outcome; resolves once its statement committed. @throws what the database throws (the row keeps its lease). */
  record(row: ClaimedDelivery, outcome: Outcome): Promise<RecordResult>;
  readonly outstanding: number;
  /** Resolves once every outcome queued so far is written or failed (never rejects). */
  settled(): Promise<void>;
}

export interface OutcomeBatcherOptions {
  batch: number;
  flushes: number;
}

interface Waiting {
  item: OutcomeItem;
  resolve: (r: RecordResult) => void;
  reject: (e: unknown) => void;
}

export function createOutcomeBatcher(sql: postgres.Sql, clock: Clock, opts: OutcomeBatcherOptions): OutcomeBatcher {
  const queue: Waiting[] = [];
  let flushing = 0;
  let outstanding = 0;
  let idle: (() => void)[] = [];
  const done = () => {
    if (--outstanding > 0) return;
    const waiting = idle;
    idle = [];
    for (const w of waiting) w();
  };

  async function flush(): Promise<void> {
    if (flushing >= opts.flushes) return;
    flushing++;
    try {
      while (queue.length) {
        const batch = queue.splice(0, opts.batch);
        try {
          const r = await recordOutcomes(
            sql,
            batch.map((b) => b.item),
            clock.now(),
          );
          // A deactivation is reported on its webhook's first outcome only.
          const unreported = new Set(r.deactivated);
          for (const b of batch)
            b.resolve({
              recorded: r.recorded.has(b.item.delivery.id),
              deactivated: unreported.delete(b.item.delivery.webhook_id),
            });
        } catch (e) {
          for (const b of batch) b.reject(e);
        }
        for (let i = 0; i < batch.length; i++) done();
      }
    } finally {
      flushing--;
    }
  }

  return {
    record(row, outcome) {
      outstanding++;
      return new Promise((resolve, reject) => {
        queue.push({ item: { delivery: row, outcome }, resolve, reject });
        void flush();
      });
    },
    get outstanding() {
      return outstanding;
    },
    settled() {
      return outstanding === 0 ? Promise.resolve() : new Promise((r) => idle.push(r));
    },
  };
}
