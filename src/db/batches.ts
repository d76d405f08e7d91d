/**
 * Bounded batches for the retention deletes every module runs on its own tables (housekeeping,
 * docs/spec-map.md "Table owners"): each statement holds its row locks briefly, and a large backlog is worked
 * off over several runs instead of in one long transaction.
 */

/** How a prune splits its deletes. */
export interface PruneBatches {
  /** Rows per delete statement. */
  batchSize: number;
  /** Statements per table per run. */
  maxBatches: number;
}

/**
 * Runs `stmt` (one delete of at most `batchSize` rows, returning how many it deleted) until it deletes fewer
 * than `batchSize` or has run `maxBatches` times. Returns the rows deleted in all.
 */
export async function deleteInBatches({ batchSize, maxBatches }: PruneBatches, stmt: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await stmt();
    total += n;
    if (n < batchSize) break;
  }
  return total;
}
