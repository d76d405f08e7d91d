/** When each API key was last used, stamped in batches (docs/performance.md#decisions). */
import type { Db } from "../../db/client.ts";

/** Longest time a noted use waits before it is written, ms. */
const KEY_USE_FLUSH_MS = 1_000;
/** A key's stamp moves at most this often, ms. */
const STAMP_EVERY_MS = 60_000;
/** Keys remembered as recently stamped; past this the memory starts again empty (a flood of keys cannot grow it). */
const MAX_REMEMBERED = 10_000;

/** The key-use recorder of one process and pool, built with the services (src/services.ts). */
export class KeyUse {
  private readonly noted = new Map<string, number>();
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

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), KEY_USE_FLUSH_MS);
    this.timer.unref?.();
  }

  /** Writes every pending note in one statement; never rejects (a failed batch is dropped: the next use notes again). */
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
