/**
 * Bounded waiting for graceful stops: every owner of background work (the
 * re-check runner, the delivery worker, the scheduler, main's shutdown) waits
 * for what is in flight, but never longer than its grace period.
 */

/**
 * Waits until `work` settles or `ms` milliseconds have passed, whichever is
 * first. Never rejects: a rejection of `work` counts as settled (the owner
 * logs failures where they happen). The timer is cleared either way, so it
 * never holds the process open.
 * @param work one promise, or several (all of them must settle)
 * @param ms the longest wait, milliseconds; 0 or less returns at once
 * @returns `true` when `work` settled in time, `false` on timeout
 */
export async function settleWithin(work: Promise<unknown> | readonly Promise<unknown>[], ms: number): Promise<boolean> {
  if (ms <= 0) return false;
  const all = Promise.allSettled(Array.isArray(work) ? work : [work]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([all.then(() => true as const), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
