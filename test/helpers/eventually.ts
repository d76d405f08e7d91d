/**
 * Polls `f` every 20 ms until it holds; false after `ms` (default 5,000). The bound only keeps a broken
 * build from hanging: what is awaited (a NOTIFY, a flush timer) normally arrives in milliseconds.
 */
export async function eventually(f: () => boolean | Promise<boolean>, ms = 5_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await f()) return true;
    await Bun.sleep(20);
  }
  return false;
}
