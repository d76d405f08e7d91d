/** Per-key concurrency of the job runner (docs/architecture.md, "Job runner"): rows of one key running, keys full. */

/** How a pipeline's rows share keys; without `keyOf` no row waits for another. */
export interface KeyOptions<Row> {
  /** Rows sharing a key run one at a time (at most `perKey`); none: no limit but `concurrency`. */
  keyOf?(row: Row): string;
  /** Rows of one key in flight at once (default 1, with `keyOf`). */
  perKey?: number;
  /**
   * With `keyOf`: a key holding this many rows (running and waiting) is full. Claims are told the full keys, to leave
   * them out, and `drain` claims again as rows finish instead of batch after batch, so a slow key holds up no other.
   */
  keyFullAt?: number;
}

/** The running rows per key. */
export class KeyLimits<Row> {
  private readonly running = new Map<string, number>();

  constructor(private readonly o: KeyOptions<Row>) {}

  /** Whether a row of `row`'s key may start now. */
  hasRoom(row: Row): boolean {
    return !this.o.keyOf || (this.running.get(this.o.keyOf(row)) ?? 0) < (this.o.perKey ?? 1);
  }

  /** Counts `row` as started (`by` 1) or ended (-1). */
  count(row: Row, by: 1 | -1): void {
    if (!this.o.keyOf) return;
    const key = this.o.keyOf(row);
    const n = (this.running.get(key) ?? 0) + by;
    if (n > 0) this.running.set(key, n);
    else this.running.delete(key);
  }

  /** The keys holding `keyFullAt` or more of the `held` rows (none without it). */
  full(held: readonly Row[]): string[] {
    const { keyOf, keyFullAt } = this.o;
    if (!keyOf || keyFullAt === undefined) return [];
    const n = new Map<string, number>();
    for (const row of held) n.set(keyOf(row), (n.get(keyOf(row)) ?? 0) + 1);
    return [...n].filter(([, count]) => count >= keyFullAt).map(([key]) => key);
  }
}
