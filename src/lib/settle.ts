/** Waits until `work` settles or `ms` pass, for graceful stops; never rejects. @returns whether it settled */
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
