/**
 * Per-account per-minute windows (spec-map Decisions: Per-minute rate limit), counted in process and shared
 * across replicas through `rate_windows` in small batches.
 *
 * A request is counted here at once (no database round trip) and decided on
 * `known + in flight + pending`: `known` is the window's total across all
 * replicas as the last flush returned it. A flush runs at most every
 * {@link FLUSH_INTERVAL_MS} while anything is pending and adds this process's
 * pending counts in ONE statement (`insert … select from unnest … on conflict
 * do update … returning count`), which also brings back the other replicas'
 * counts.
 *
 * Bound on overshoot: within one process the count is exact. Across
 * replicas, a replica decides on the others' counts as of its own last flush
 * for that window, and it flushes within one interval after any request. So
 * an account can get past its limit by at most what each OTHER replica admits
 * for it before that replica's next flush (≈ one interval, 1 s, plus a
 * round trip, of that account's traffic there; 1/60 of the window at a steady
 * rate) — with one replica, never.
 * A request refused with 429 still counts in the window, as before. A
 * stopping process writes its pending counts (src/services.ts, `stopServices`);
 * counts pending when a process dies (≤ one interval) are lost, which can
 * only admit more, never refuse wrongly.
 *
 * Cost: one upsert row per active account per interval (not per request).
 * That row, not the request, is what the database pays for: with many
 * accounts each sending a few requests a second, a 200 ms interval cost
 * PostgreSQL about as much CPU per request as the whole key gate costs the
 * service (`bun run bench`, "DB µs/req"), so the interval is 1 s.
 */
import type { Db } from "../../db/client.ts";
import { RATE_LIMIT_WINDOW_MS } from "./rate-limit.ts";

/** Longest time a count waits before it is written, ms. */
export const FLUSH_INTERVAL_MS = 1_000;

interface Window {
  accountId: string;
  startMs: number;
  /** Total across replicas as of the last flush (includes this process's flushed counts). */
  known: number;
  /** Counted here, being written by the flush in flight. */
  sending: number;
  /** Counted here, not written yet. */
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
    if (!byAccount) this.windows.set(startMs, (byAccount = new Map()));
    let w = byAccount.get(accountId);
    if (!w) byAccount.set(accountId, (w = { accountId, startMs, known: 0, sending: 0, pending: 0 }));
    w.pending++;
    this.schedule();
    return w.known + w.sending + w.pending;
  }

  private schedule(): void {
    if (this.timer || this.inflight) return;
    this.timer = setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS);
    // Never keeps a process alive on its own.
    this.timer.unref?.();
  }

  /**
   * Writes every pending count in one statement and learns the windows' totals. A call while a flush is
   * in flight waits for it, then writes what is still pending: when it resolves, every count made before
   * the call is written (or kept for the next flush if the database failed).
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
        select k, w::timestamptz, n from unnest(${batch.map((w) => "rl:" + w.accountId)}::text[], ${batch.map((w) => new Date(w.startMs).toISOString())}::text[], ${batch.map((w) => w.sending)}::int[]) as b(k, w, n)
        on conflict (key, window_start) do update set count = rate_windows.count + excluded.count
        returning key, window_start, count`;
      const total = new Map(rows.map((r) => [`${r.key.slice(3)}|${new Date(r.window_start).getTime()}`, Number(r.count)]));
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

  /** Every window held, of every start. */
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
        if (w.sending === 0 && (startMs < newest - 2 * RATE_LIMIT_WINDOW_MS || w.pending === 0)) byAccount.delete(accountId);
      if (byAccount.size === 0) this.windows.delete(startMs);
    }
  }
}
