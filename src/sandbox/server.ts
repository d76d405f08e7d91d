/** The courier simulator (docs/spec-map.md#sandbox): a loopback HTTP server speaking each wire format. */
import type { Clock } from "../lib/clock.ts";
import type { AdapterId, Courier } from "../modules/couriers/catalogue.ts";
import type { CourierSimulator } from "../modules/couriers/simulator.ts";
import { sandboxCredential } from "../twin-kit/credentials.ts";
import { rememberBounded } from "../twin-kit/bounded.ts";
import { nextStep, scenarioDigit, scenarioFor } from "../twin-kit/scenario.ts";
import type { SimContext, Twin } from "../twin-kit/twin.ts";
import { CARRIERS } from "../modules/couriers/carriers/index.ts";

/** Numbers ending in this digit go through the asynchronous aggregator's twin (docs/spec-map.md, "Sandbox"). */
const ASYNC_DIGIT = 9;
/** The aggregator that answers them: the 17TRACK adapter (register, then poll). */
const AGGREGATOR: AdapterId = "track17";

/** Sandbox routing: digit {@link ASYNC_DIGIT} of any courier goes through the aggregator. */
function sandboxRoute(courier: Courier, trackingNumber: string): AdapterId | undefined {
  return courier.adapter !== AGGREGATOR && scenarioDigit(trackingNumber) === ASYNC_DIGIT ? AGGREGATOR : undefined;
}

/** The running simulator; it is the {@link CourierSimulator} the courier backends are given. */
export interface Simulator extends CourierSimulator {
  url: string;
  /** Base URL for one adapter: `http://127.0.0.1:<port>/<id>`. */
  baseUrlFor(adapterId: string): string;
  /** Backend calls seen for (twin, number). */
  calls(twinId: string, trackingNumber: string): number;
  /** Forgets first-seen times and counters (tests). */
  reset(): void;
  /** Makes twin `adapterId` slow or failing from now on; null restores it. */
  degrade(adapterId: string, d: Degradation | null): void;
  stop(): Promise<void>;
}

export interface SimulatorOptions {
  clock: Clock;
  stepSeconds: number;
  asyncSeconds: number;
  /** 0 = any free port. */
  port?: number;
  /** Extra latency added to every answer, in ms (benchmarks). */
  latencyMs?: number;
  /** Twins that degrade from the start (`SANDBOX_DEGRADE`), by adapter id. */
  degrade?: Readonly<Record<string, Degradation>>;
  /** The twins served; default every courier folder's (the registry, src/modules/couriers/carriers/index.ts). */
  twins?: readonly Twin[];
}

/** A twin made slow or failing (docs/courier-health.md, "Sandbox"). */
export interface Degradation {
  /** Share of answers that fail with HTTP 503, in percent (0..100), spread evenly over the calls. */
  failPercent: number;
  /** Wait before every answer, ms. */
  delayMs: number;
}

/** Parses `SANDBOX_DEGRADE` entries (`backend:failPercent:delayMs`); percents above 100 count as 100. */
export function parseDegrade(entries: readonly string[]): Record<string, Degradation> {
  const out: Record<string, Degradation> = {};
  for (const e of entries) {
    const [id, fail, delay] = e.split(":");
    if (id) out[id] = { failPercent: Math.min(100, Number(fail) || 0), delayMs: Number(delay) || 0 };
  }
  return out;
}

/** Whether call `n` (1, 2, 3…) of a twin failing `percent` % fails: exactly that share of every 100 calls. */
export const failsAt = (n: number, percent: number) =>
  Math.floor((n * percent) / 100) > Math.floor(((n - 1) * percent) / 100);

/** When number `n` was first seen; a new number is seen `now`. */
function firstSeenAt(firstSeen: Map<string, number>, n: string, now: number): number {
  const seen = firstSeen.get(n);
  if (seen !== undefined) return seen;
  rememberBounded(firstSeen, n, now);
  return now;
}

/** Pulls number `n`'s next scripted step forward to now (the sandbox advance endpoint); false when none is left. */
function advance(
  n: string,
  opts: SimulatorOptions,
  firstSeen: Map<string, number>,
  pulled: Map<string, Map<number, number>>,
): boolean {
  const now = opts.clock.now();
  const seen = firstSeenAt(firstSeen, n, now);
  const mine = pulled.get(n) ?? new Map<number, number>();
  const k = nextStep(n, seen, now, opts.stepSeconds, mine);
  if (k === undefined) return false;
  mine.set(k, now);
  rememberBounded(pulled, n, mine);
  return true;
}

/** One request to the simulator: the twin named by the path's first segment answers, unless degraded first. */
async function serveTwin(
  req: Request,
  opts: SimulatorOptions,
  byId: ReadonlyMap<string, Twin>,
  degraded: Map<string, Degradation & { n: number }>,
  sim: SimContext,
): Promise<Response> {
  const url = new URL(req.url);
  const id = url.pathname.split("/")[1] ?? "";
  const twin = byId.get(id);
  if (!twin) return new Response("not found", { status: 404 });
  if (opts.latencyMs) await Bun.sleep(opts.latencyMs);
  const d = degraded.get(id);
  if (d) {
    d.n++;
    const fail = failsAt(d.n, d.failPercent);
    if (d.delayMs) await Bun.sleep(d.delayMs);
    if (fail) return new Response("<html><body><h1>503 Service Unavailable</h1></body></html>", { status: 503 });
  }
  try {
    return await twin.handle(req, url, sim);
  } catch (err) {
    return new Response(`simulator error: ${(err as Error).message}`, { status: 500 });
  }
}

/** The simulator's address: loopback only. */
export const SIMULATOR_HOST = "127.0.0.1";

/** Starts the simulator on {@link SIMULATOR_HOST}; a port in use throws Bun's EADDRINUSE error. */
export function startSimulator(opts: SimulatorOptions): Simulator {
  const firstSeen = new Map<string, number>();
  /** Steps pulled forward by `advance`, by number: step → when (ms). */
  const pulled = new Map<string, Map<number, number>>();
  const counts = new Map<string, number>();
  const state = new Map<string, unknown>();
  const held = new Set<() => void>();
  const sim: SimContext = {
    scenario(n) {
      const now = opts.clock.now();
      return scenarioFor(n, firstSeenAt(firstSeen, n, now), now, opts.stepSeconds, pulled.get(n));
    },
    async gate(n) {
      const digit = scenarioDigit(n);
      if (digit === 6)
        return new Response("<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>", {
          status: 503,
          headers: { "content-type": "text/html" },
        });
      if (digit === 5) {
        // Never answer in time: hold the request (bounded, so a forgotten client cannot pin it forever).
        await new Promise<void>((resolve) => {
          const done = () => {
            held.delete(done);
            resolve();
          };
          held.add(done);
          setTimeout(done, 120_000).unref?.();
        });
        return new Response("", { status: 504 });
      }
      return undefined;
    },
    count(twinId, n) {
      const k = `${twinId}:${n}`;
      rememberBounded(counts, k, (counts.get(k) ?? 0) + 1);
    },
    now: () => opts.clock.now(),
    stepSeconds: opts.stepSeconds,
    asyncSeconds: opts.asyncSeconds,
    state,
  };
  const byId = new Map((opts.twins ?? CARRIERS.map((c) => c.twin)).map((t) => [t.id, t]));
  const degraded = new Map<string, Degradation & { n: number }>(
    Object.entries(opts.degrade ?? {}).map(([id, d]) => [id, { ...d, n: 0 }]),
  );
  const server = Bun.serve({
    hostname: SIMULATOR_HOST,
    port: opts.port ?? 0,
    idleTimeout: 0,
    fetch: (req) => serveTwin(req, opts, byId, degraded, sim),
  });
  const url = `http://${SIMULATOR_HOST}:${server.port}`;
  return {
    url,
    baseUrlFor: (id) => `${url}/${id}`,
    credential: sandboxCredential,
    route: sandboxRoute,
    advance: (n) => advance(n, opts, firstSeen, pulled),
    calls: (twinId, n) => counts.get(`${twinId}:${n}`) ?? 0,
    degrade(adapterId, d) {
      if (d) degraded.set(adapterId, { ...d, n: 0 });
      else degraded.delete(adapterId);
    },
    reset() {
      firstSeen.clear();
      pulled.clear();
      counts.clear();
      state.clear();
    },
    async stop() {
      for (const release of [...held]) release();
      await server.stop(true);
    },
  };
}
