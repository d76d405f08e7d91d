/** Per-minute windows counted in process, shared in batches (docs/performance.md#decisions). */
import type { Db } from "../../db/client.ts";
import { RATE_LIMIT_WINDOW_MS } from "./rate-limit.ts";

/** Longest time a count waits before it is written, ms. */
export const FLUSH_INTERVAL_MS = 1_000;

interface Window {
  accountId: string;
  startMs: number;
  /** Total across replicas as of the last flush (includes this process's flushed counts). */
  known: number;
  sending: number;
  pending: number;
}

/** The counter of one process and pool (one per replica), built with the services (src/services.ts). */
export class RateCounter {
  /** Windows by start (ms), then by account: a lookup per request hashes no new string. */
  private readonly windows = new Map<number, Map<string, Window>>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inflight: Promise<void> | undefined;

  constructor(private readonly db: Db) {}

  /** Counts one request of `accountId` in the window starting at `startMs`; returns the window's count including it. */
  hit(accountId: string, startMs: number): number {
    let byAccount = this.windows.get(startMs);
    if (!byAccount) {
      byAccount = new Map();
      this.windows.set(startMs, byAccount);
    }
    let w = byAccount.get(accountId);
    if (!w) {
      w = { accountId, startMs, known: 0, sending: 0, pending: 0 };
      byAccount.set(accountId, w);
    }
    w.pending++;
    this.schedule();
    return w.known + w.sending + w.pending;
  }

  private schedule(): void {
    if (this.timer || this.inflight) return;
    this.timer = setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS);
    this.timer.unref?.();
  }

  /**
   * Writes every pending count in one statement and learns the totals; a call during a flush waits, then writes
   * what is still pending (kept for the next flush if the database failed).
   */
  async flush(): Promise<void> {
    while (this.inflight) await this.inflight;
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.all().filter((w) => w.pending > 0);
    if (batch.length === 0) return;
    let done!: () => void;
    this.inflight = new Promise<void>((r) => (done = r));
    // Same order in every replica: two flushes touching the same rows cannot deadlock.
    batch.sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : a.startMs - b.startMs));
    for (const w of batch) [w.sending, w.pending] = [w.pending, 0];
    try {
      // Instants travel as text: Drizzle makes the driver's timestamptz[] serializer a pass-through.
      const rows = await this.db.$client<{ key: string; window_start: string; count: number }[]>`
        insert into rate_windows (key, window_start, count)
        select k, w::timestamptz, n from unnest(${batch.map((w) => `rl:${w.accountId}`)}::text[], ${batch.map((w) => new Date(w.startMs).toISOString())}::text[], ${batch.map((w) => w.sending)}::int[]) as b(k, w, n)
        on conflict (key, window_start) do update set count = rate_windows.count + excluded.count
        returning key, window_start, count`;
      const total = new Map(
        rows.map((r) => [`${r.key.slice(3)}|${new Date(r.window_start).getTime()}`, Number(r.count)]),
      );
      for (const w of batch) {
        w.known = total.get(`${w.accountId}|${w.startMs}`) ?? w.known + w.sending;
        w.sending = 0;
      }
    } catch {
      // Database unreachable: keep the counts and try again with the next flush.
      for (const w of batch) [w.pending, w.sending] = [w.pending + w.sending, 0];
    } finally {
      this.inflight = undefined;
      done();
      this.forgetOld();
      if (this.all().some((w) => w.pending > 0)) this.schedule();
    }
  }

  /** Writes what is pending (shutdown, src/services.ts); see {@link flush}. */
  stop(): Promise<void> {
    return this.flush();
  }

  private all(): Window[] {
    const out: Window[] = [];
    for (const byAccount of this.windows.values()) for (const w of byAccount.values()) out.push(w);
    return out;
  }

  /** Windows that ended a minute ago are no longer needed once written (after two, even if unwritten). */
  private forgetOld(): void {
    let newest = 0;
    for (const startMs of this.windows.keys()) newest = Math.max(newest, startMs);
    for (const [startMs, byAccount] of this.windows) {
      if (startMs >= newest - RATE_LIMIT_WINDOW_MS) continue;
      for (const [accountId, w] of byAccount)
        if (w.sending === 0 && (startMs < newest - 2 * RATE_LIMIT_WINDOW_MS || w.pending === 0))
          byAccount.delete(accountId);
      if (byAccount.size === 0) this.windows.delete(startMs);
    }
  }
}
