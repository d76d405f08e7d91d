/**
 * Load generator for the benchmarks, run in a Worker thread so it does not
 * share the service's JavaScript thread: keeps `concurrency` requests in
 * flight for `durationMs` and posts back every latency (ms) and status count.
 */
interface Job {
  base: string;
  paths: string[];
  keys: string[];
  concurrency: number;
  durationMs: number;
}

/** The worker's global scope (typed by hand: the project's lib is the DOM's, not a worker's). */
const scope = globalThis as unknown as {
  onmessage: ((e: MessageEvent<Job>) => void) | null;
  postMessage(message: unknown): void;
};

scope.onmessage = async (e: MessageEvent<Job>) => {
  const { base, paths, keys, concurrency, durationMs } = e.data;
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let i = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const n = i++;
        const t0 = performance.now();
        const res = await fetch(base + paths[n % paths.length]!, { headers: { "x-api-key": keys[n % keys.length]! } });
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }
    }),
  );
  scope.postMessage({ latencies, statuses, seconds: (performance.now() - started) / 1000 });
};
