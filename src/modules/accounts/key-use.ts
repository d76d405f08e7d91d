/**
 * When each API key was last used (`api_keys.last_used_at`: the dashboard's key list and the operator CLI),
 * written in batches.
 *
 * The key gate notes each authenticated request's key here, with no database work; a key is noted at most
 * once a minute per process. At most {@link KEY_USE_FLUSH_MS} after a note, ONE statement stamps every noted
 * key, and its `where` skips a key stamped less than a minute before (another replica's stamp).
 *
 * So the stamp has a minute's granularity and lags a use by at most one interval; listing the keys
 * ({@link listApiKeys} in service.ts) writes this process's notes first. A stopping process writes its notes
 * (src/services.ts, `stopServices`); one killed without its shutdown loses at most one interval of them.
 *
 * Why batched: one UPDATE per key, built by Drizzle, cost the main thread about half a millisecond, and the
 * stamps of all keys in use came due together once a minute (their first uses arrive together after a
 * start), holding up requests for seconds on a busy replica (`bun run bench`, P1).
 */
import type { Db } from "../../db/client.ts";

/** Longest time a noted use waits before it is written, ms. */
export const KEY_USE_FLUSH_MS = 1_000;
/** A key's stamp moves at most this often, ms. */
const STAMP_EVERY_MS = 60_000;
/** Keys remembered as recently stamped; past this the memory starts again empty (a flood of keys cannot grow it). */
const MAX_REMEMBERED = 10_000;

/** The key-use recorder of one process and pool, built with the services (src/services.ts). */
export class KeyUse {
  /** When this process last noted each key (wall-clock ms of the use). */
  private readonly noted = new Map<string, number>();
  /** Noted and not written yet: key id → ms of the use. */
  private pending = new Map<string, number>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inflight: Promise<void> | undefined;

  constructor(private readonly db: Db) {}

  /** Notes a use of `keyId` at `nowMs` (ms); synchronous, no database work. */
  note(keyId: string, nowMs: number): void {
    const last = this.noted.get(keyId);
    if (last !== undefined && nowMs - last < STAMP_EVERY_MS && nowMs >= last) return;
    if (this.noted.size >= MAX_REMEMBERED) this.noted.clear();
    this.noted.set(keyId, nowMs);
    this.pending.set(keyId, nowMs);
    if (!this.inflight) this.schedule();
  }

  /** Starts the flush timer unless it runs already. */
  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), KEY_USE_FLUSH_MS);
    // Never keeps a process alive on its own.
    this.timer.unref?.();
  }

  /**
   * Writes every pending note in one statement; never rejects. When it resolves, every note made before the
   * call is written. A database failure drops the batch (the next use of each key a minute later notes it again).
   */
  async flush(): Promise<void> {
    while (this.inflight) await this.inflight;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const ids = [...batch.keys()];
    // Instants travel as text (see rate-counter.ts).
    const at = [...batch.values()].map((ms) => new Date(ms).toISOString());
    this.inflight = this.db.$client`
      update api_keys k set last_used_at = u.at::timestamptz
      from unnest(${ids}::text[], ${at}::text[]) as u(id, at)
      where k.id = u.id and (k.last_used_at is null or k.last_used_at < u.at::timestamptz - interval '1 minute')`.then(
      () => undefined,
      () => undefined,
    );
    try {
      await this.inflight;
    } finally {
      this.inflight = undefined;
      if (this.pending.size > 0) this.schedule();
    }
  }

  /** Writes the pending notes (shutdown, src/services.ts); see {@link flush}. */
  stop(): Promise<void> {
    return this.flush();
  }
}
