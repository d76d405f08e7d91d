/** Bounded batches for every module's retention deletes: short row locks, a large backlog worked off over several runs. */

/** How a prune splits its deletes. */
export interface PruneBatches {
  batchSize: number;
  maxBatches: number;
}

/** Runs `stmt` (one delete of at most `batchSize` rows) until it deletes fewer or ran `maxBatches` times; returns the total. */
export async function deleteInBatches(
  { batchSize, maxBatches }: PruneBatches,
  stmt: () => Promise<number>,
): Promise<number> {
  let total = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await stmt();
    total += n;
    if (n < batchSize) break;
  }
  return total;
}
