/** Courier backends at run time (spec-map Decisions: Concurrent lookups, Lookup-only couriers). */
import { parseRateLimits, type Config } from "../../config/index.ts";
import type { Db } from "../../db/client.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/log.ts";
import { ADAPTERS } from "./adapters/index.ts";
import { CourierError, type AdapterContext, type CourierAdapter, type CourierHttp } from "./adapters/types.ts";
import type { ActionAnswer, ActionRequest } from "./adapters/types.ts";
import type { ActionRules } from "../../domain/actions.ts";
import type { TrackingSnapshot } from "../../domain/checkpoint.ts";
import { COURIER_BACKENDS, COURIERS, type AdapterId, type Courier } from "./catalogue.ts";
import { createCourierHttp, expiringSignal } from "./http.ts";
import { Lane } from "./lane.ts";
import { budgetOf as rateBudget, type Budget, type CallPurpose, type CourierBudgets } from "./budget.ts";
import { BudgetCoverage, type BudgetView } from "./coverage.ts";
import type { CourierSimulator } from "./simulator.ts";

type Availability = "live" | "sandbox" | "unavailable";

export interface LookupResult {
  snapshot: TrackingSnapshot;
  /** Milliseconds spent on the courier backend (shared lookups report the shared call's time). */
  fetchMs: number;
}

export interface CourierBackends {
  availability(courier: Courier): Availability;
  /**
   * Looks up `trackingNumber` within the backend's shared rate budget; `recheck` yields to live lookups.
   * @throws CourierError; `unavailable` couriers throw kind `auth`; a spent budget CourierBusyError
   */
  lookup(courier: Courier, trackingNumber: string, purpose?: CallPurpose): Promise<LookupResult>;
  /** The courier's shared rate budget and whether it covers its followed shipments; null without a budget. */
  budget(courier: Courier): BudgetView | null;
  describe(): Record<string, Availability>;
  /** The courier's NDR action rules (docs/ndr-actions.md), null when it has no documented action API or no backend. */
  actionRules(courier: Courier): ActionRules | null;
  /**
   * Sends an action (`poll`: reads an asynchronous courier's decision on `reference`), within the courier's budget
   * as background work. @throws CourierError; a spent budget CourierBusyError
   */
  act(courier: Courier, req: ActionRequest, poll?: string): Promise<ActionAnswer>;
  /** Sandbox only: moves the simulated shipment on now; undefined when the simulator does not answer it. */
  advanceSandbox(courier: Courier, trackingNumber: string): boolean | undefined;
  close(): Promise<void>;
}

interface Backend {
  adapter: CourierAdapter;
  availability: Availability;
  http: CourierHttp;
  credentials: Record<string, string>;
  lane: Lane;
  budget: Budget | undefined;
}

/** The longest a tracking request can take, ms (lane wait + lookup budget + a database margin); idle timeout must exceed it. */
export function longestAnswerMs(config: Pick<Config, "courierAsyncBudgetMs" | "courierTimeoutMs">): number {
  return 2 * Math.max(config.courierAsyncBudgetMs, config.courierTimeoutMs) + 5_000;
}

/** Hears every courier backend call (courier health, src/modules/courier-health/buckets.ts); never the number. */
export interface CallRecorder {
  /** `failure`: the CourierError kind, null when the courier answered; `ms`: the call's duration. */
  record(courier: string, failure: string | null, ms: number, httpStatus?: number): void;
}

export interface BackendsOptions {
  config: Config;
  clock: Clock;
  log: Logger;
  /** The courier simulator couriers without credentials talk to in sandbox mode (src/sandbox/ registers itself here). */
  simulator?: CourierSimulator;
  adapters?: Readonly<Record<AdapterId, CourierAdapter>>;
  db?: Db;
  /** This process's courier budgets (`Services.courierBudgets`, src/services.ts); without them no budget applies (tests of adapters). */
  budgets?: CourierBudgets;
  /** This process's courier health buckets (`Services.courierCalls`). */
  calls?: CallRecorder;
}

function budgetOf(config: Pick<Config, "courierAsyncBudgetMs" | "courierTimeoutMs">, adapter: CourierAdapter): number {
  return adapter.async ? config.courierAsyncBudgetMs : config.courierTimeoutMs;
}

function buildBackend(adapter: CourierAdapter, opts: BackendsOptions): Backend {
  const { config } = opts;
  const env = config.courierEnv;
  const hasCredentials = adapter.credentialVars.every((v) => Boolean(env[v]));
  const ownBaseUrl = env[`${adapter.envPrefix}_BASE_URL`];
  const live = hasCredentials && (config.courierMode === "live" || Boolean(ownBaseUrl));
  // The simulator answers only when the courier is not live and COURIER_MODE is sandbox.
  const simulator = !live && config.courierMode === "sandbox" ? opts.simulator : undefined;
  const availability: Availability = live ? "live" : simulator ? "sandbox" : "unavailable";
  const baseUrl = simulator ? simulator.baseUrlFor(adapter.id) : (ownBaseUrl ?? adapter.defaultBaseUrl);
  const credentials: Record<string, string> = {};
  for (const v of adapter.credentialVars) credentials[v] = simulator ? simulator.credential(v) : (env[v] ?? "");
  // Optional variables an adapter reads (account numbers etc.) pass through in live mode.
  if (availability === "live")
    for (const [k, v] of Object.entries(env)) if (k.startsWith(`${adapter.envPrefix}_`)) credentials[k] ??= v;
  const budget = budgetOf(config, adapter);
  const rates = parseRateLimits(config.courierRateLimits, COURIER_BACKENDS);
  return {
    adapter,
    availability,
    credentials,
    budget:
      availability === "unavailable"
        ? undefined
        : rateBudget(
            adapter.id as AdapterId,
            availability === "live",
            credentials,
            rates,
            config.courierLiveReservePercent,
          ),
    http: createCourierHttp({
      baseUrl,
      timeoutMs: config.courierTimeoutMs,
      connections: Math.min(config.courierConcurrency, 64),
    }),
    lane: new Lane({
      name: adapter.id,
      concurrency: config.courierConcurrency,
      queueLimit: config.courierQueueLimit,
      maxWaitMs: budget,
      // An asynchronous backend answers within its budget; before the first answer, expect half of it.
      expectedMs: adapter.async ? budget / 2 : undefined,
    }),
  };
}

/** What an adapter call at backend `b` sees: its HTTP client, credentials, the budget's signal and the clock. */
function contextOf(b: Backend, courier: Courier, signal: AbortSignal, opts: BackendsOptions): AdapterContext {
  const sleep = (ms: number) => abortableSleep(ms, signal);
  return { courier, http: b.http, credentials: b.credentials, signal, now: () => opts.clock.now(), sleep };
}

/**
 * One lookup at backend `b`, in its lane, within its budget.
 * @throws CourierError — the adapter's own, `timeout` when the budget ran out, else `backend`; `auth` when unavailable
 */
async function callBackend(
  b: Backend,
  courier: Courier,
  trackingNumber: string,
  purpose: CallPurpose,
  opts: BackendsOptions,
): Promise<LookupResult> {
  if (b.availability === "unavailable") throw new CourierError("auth", `${courier.slug}: no credentials configured`);
  // A token before a turn in the lane: a lookup waiting for the budget holds no lane slot.
  if (b.budget && opts.budgets) await opts.budgets.acquire(b.budget, purpose);
  const budget = budgetOf(opts.config, b.adapter);
  return b.lane.run(async () => {
    // The budget starts with the backend work, not with the wait for a turn (the lane bounds that).
    const { signal, clear } = expiringSignal(budget);
    const started = performance.now();
    try {
      const snapshot = await b.adapter.track(trackingNumber, contextOf(b, courier, signal, opts));
      const fetchMs = performance.now() - started;
      opts.calls?.record(courier.slug, null, fetchMs);
      return { snapshot, fetchMs };
    } catch (err) {
      const e = classified(err, signal, courier, budget, opts);
      opts.calls?.record(courier.slug, e.kind, performance.now() - started, e.httpStatus);
      throw e;
    } finally {
      clear();
    }
  });
}

/** One action call at backend `b`: budget (as background work), lane, timeout, as {@link callBackend}. */
async function callAction(
  b: Backend,
  courier: Courier,
  req: ActionRequest,
  poll: string | undefined,
  opts: BackendsOptions,
): Promise<ActionAnswer> {
  const actions = b.adapter.actions;
  if (b.availability === "unavailable" || !actions)
    throw new CourierError("auth", `${courier.slug}: no action API configured`);
  if (b.budget && opts.budgets) await opts.budgets.acquire(b.budget, "recheck");
  const budget = budgetOf(opts.config, b.adapter);
  return b.lane.run(async () => {
    const { signal, clear } = expiringSignal(budget);
    const ctx = contextOf(b, courier, signal, opts);
    try {
      if (poll === undefined) return await actions.submit(req, ctx);
      if (!actions.poll) throw new CourierError("backend", `${courier.slug}: no status API`);
      return await actions.poll(poll, req, ctx);
    } catch (err) {
      throw classified(err, signal, courier, budget, opts);
    } finally {
      clear();
    }
  });
}

/** The backends of every adapter (see the file comment); concurrent lookups of one courier + number share one call. */
export function createCourierBackends(opts: BackendsOptions): CourierBackends {
  const adapters = opts.adapters ?? ADAPTERS;
  const backends = new Map<string, Backend>();
  for (const adapter of Object.values(adapters)) backends.set(adapter.id, buildBackend(adapter, opts));
  const inflight = new Map<string, Promise<LookupResult>>();
  const coverage = opts.db
    ? new BudgetCoverage(
        opts.db,
        opts.config,
        [...backends.values()].flatMap((b) => (b.budget ? [b.budget] : [])),
        opts.log,
        opts.clock,
      )
    : undefined;
  coverage?.start();

  /** The backend of adapter `id`; every catalogue adapter has one. @throws Error for an id without one */
  function backendOf(id: string): Backend {
    const b = backends.get(id);
    if (!b) throw new Error(`no courier backend ${id}`);
    return b;
  }

  /** The backend for this courier and number: in sandbox mode the simulator may route a number to another adapter. */
  function backendFor(courier: Courier, trackingNumber: string): Backend {
    const direct = backendOf(courier.adapter);
    const routed = direct.availability === "sandbox" ? opts.simulator?.route(courier, trackingNumber) : undefined;
    return routed ? backendOf(routed) : direct;
  }

  return {
    availability: (c) => backendOf(c.adapter).availability,
    lookup(courier, trackingNumber, purpose = "live") {
      // Live lookups never join a re-check's call: it may be waiting for the re-checks' share of the budget.
      const key = `${purpose}:${courier.slug}:${trackingNumber}`;
      let p = inflight.get(key);
      if (!p) {
        p = callBackend(backendFor(courier, trackingNumber), courier, trackingNumber, purpose, opts).finally(() =>
          inflight.delete(key),
        );
        inflight.set(key, p);
      }
      return p;
    },
    actionRules(courier) {
      const b = backendOf(courier.adapter);
      return b.availability === "unavailable" ? null : (b.adapter.actions?.rules ?? null);
    },
    act(courier, req, poll) {
      return callAction(backendOf(courier.adapter), courier, req, poll, opts);
    },
    advanceSandbox(courier, trackingNumber) {
      if (backendOf(courier.adapter).availability !== "sandbox" || !opts.simulator?.advance) return undefined;
      return opts.simulator.advance(trackingNumber);
    },
    describe() {
      const out: Record<string, Availability> = {};
      for (const c of COURIERS) out[c.slug] = backendOf(c.adapter).availability;
      return out;
    },
    budget(courier) {
      const b = backendOf(courier.adapter).budget;
      return b ? (coverage?.view(b) ?? BudgetCoverage.viewOf(b, undefined, opts.config)) : null;
    },
    async close() {
      coverage?.stop();
      await Promise.all([...backends.values()].map((b) => b.http.close()));
    },
  };
}

function classified(
  err: unknown,
  signal: AbortSignal,
  courier: Courier,
  budget: number,
  opts: BackendsOptions,
): CourierError {
  if (err instanceof CourierError) return err;
  if (signal.aborted) return new CourierError("timeout", `${courier.slug}: lookup exceeded ${budget} ms`);
  opts.log.warn("courier adapter failed", { courier: courier.slug, error: err as Error });
  return new CourierError("backend", `${courier.slug}: unexpected response`);
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new CourierError("timeout", "lookup budget spent"));
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new CourierError("timeout", "lookup budget spent"));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
