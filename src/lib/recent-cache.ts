/** Values by key, each answered for a caller-given window, at most `max` (oldest out first); one per process. */
export class RecentCache<V = unknown> {
  private readonly entries = new Map<string, { value: V; storedMs: number }>();

  constructor(private readonly max: number) {}

  /** The value stored under `key` within `windowMs` before `nowMs` (both ms), or undefined; a stale one is dropped. */
  get(key: string, nowMs: number, windowMs: number): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (nowMs - e.storedMs < windowMs && nowMs >= e.storedMs) return e.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Stores `value` under `key` at `nowMs` (ms), as the newest entry. */
  set(key: string, value: V, nowMs: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, storedMs: nowMs });
    const oldest = this.entries.keys().next();
    if (this.entries.size > this.max && !oldest.done) this.entries.delete(oldest.value);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Forgets everything (nothing to write back). */
  stop(): void {
    this.entries.clear();
  }
}
