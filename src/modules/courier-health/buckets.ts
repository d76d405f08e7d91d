/** Per-minute courier call buckets counted in process and added to PostgreSQL once a minute (docs/courier-health.md). */
import type { Db } from "../../db/client.ts";
import type { Clock } from "../../lib/clock.ts";
import { CALL_KINDS, callKindOf, LATENCY_BUCKETS_MS, type CallKind } from "../../domain/courier-health.ts";
import type { CallRecorder } from "../couriers/registry.ts";

/** How often a process adds its counts, ms. */
const FLUSH_EVERY_MS = 60_000;
const MINUTE_MS = 60_000;
const KIND_INDEX = Object.fromEntries(CALL_KINDS.map((k, i) => [k, i])) as Record<CallKind, number>;

interface Bucket {
  courier: string;
  minuteMs: number;
  calls: number;
  kinds: number[];
  latency: number[];
  sumMs: number;
}

function latencyIndex(ms: number): number {
  const i = LATENCY_BUCKETS_MS.findIndex((upTo) => ms <= upTo);
  return i < 0 ? LATENCY_BUCKETS_MS.length : i;
}

/** Adds `n` to `counts[i]`, an index inside the array. */
function add(counts: number[], i: number, n = 1): void {
  counts[i] = (counts[i] ?? 0) + n;
}

/** One process's pending buckets on one pool (a service, src/services.ts); never holds a tracking number. */
export class CallBuckets implements CallRecorder {
  private pending = new Map<string, Bucket>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private inflight: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** Counts one call of `courier` (slug) that took `ms`; `failure` is the CourierError kind, null when it answered. */
  record(courier: string, failure: string | null, ms: number, httpStatus?: number): void {
    this.add(courier, callKindOf(failure, httpStatus), ms);
  }

  /** Counts one call of a known kind (tests script outcomes through this). */
  add(courier: string, kind: CallKind, ms: number, atMs: number = this.clock.now()): void {
    const minuteMs = Math.floor(atMs / MINUTE_MS) * MINUTE_MS;
    const key = `${courier}|${minuteMs}`;
    let b = this.pending.get(key);
    if (!b) {
      b = {
        courier,
        minuteMs,
        calls: 0,
        kinds: Array(CALL_KINDS.length).fill(0),
        latency: Array(LATENCY_BUCKETS_MS.length + 1).fill(0),
        sumMs: 0,
      };
      this.pending.set(key, b);
    }
    b.calls++;
    add(b.kinds, KIND_INDEX[kind]);
    add(b.latency, latencyIndex(ms));
    b.sumMs += Math.max(0, Math.round(ms));
    if (!this.timer) {
      this.timer = setInterval(() => void this.flush().catch(() => undefined), FLUSH_EVERY_MS);
      this.timer.unref?.();
    }
  }

  /** Adds every pending bucket in one statement; on a database error the counts stay pending for the next flush. */
  async flush(): Promise<void> {
    while (this.inflight) await this.inflight;
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()].sort((a, b) =>
      a.courier < b.courier ? -1 : a.courier > b.courier ? 1 : a.minuteMs - b.minuteMs,
    );
    this.pending = new Map();
    let done!: () => void;
    this.inflight = new Promise<void>((r) => (done = r));
    try {
      await addBuckets(this.db, batch);
    } catch (err) {
      for (const b of batch) this.merge(b);
      throw err;
    } finally {
      this.inflight = undefined;
      done();
    }
  }

  private merge(b: Bucket): void {
    const key = `${b.courier}|${b.minuteMs}`;
    const cur = this.pending.get(key);
    if (!cur) return void this.pending.set(key, b);
    cur.calls += b.calls;
    cur.sumMs += b.sumMs;
    for (const [i, n] of b.kinds.entries()) add(cur.kinds, i, n);
    for (const [i, n] of b.latency.entries()) add(cur.latency, i, n);
  }

  /** Stops the timer and writes what is pending (at shutdown, after the last call). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}

/** The additive upsert: replicas writing the same minute add up; rows sorted so two flushes cannot deadlock. */
async function addBuckets(db: Db, batch: Bucket[]): Promise<void> {
  const rows = JSON.stringify(
    batch.map((b) => ({
      courier: b.courier,
      minute: new Date(b.minuteMs).toISOString(),
      calls: b.calls,
      kinds: b.kinds,
      latency: b.latency,
      sum_ms: b.sumMs,
    })),
  );
  await db.$client`
    insert into courier_call_buckets as c (courier, minute, calls, kinds, latency, latency_sum_ms)
    select courier, minute::timestamptz, calls, kinds, latency, sum_ms
    from jsonb_to_recordset(${rows}::jsonb) as r(courier text, minute text, calls int, kinds int[], latency int[], sum_ms bigint)
    on conflict (courier, minute) do update set
      calls = c.calls + excluded.calls,
      kinds = array(select coalesce(x, 0) + coalesce(y, 0) from unnest(c.kinds, excluded.kinds) with ordinality as u(x, y, i) order by i),
      latency = array(select coalesce(x, 0) + coalesce(y, 0) from unnest(c.latency, excluded.latency) with ordinality as u(x, y, i) order by i),
      latency_sum_ms = c.latency_sum_ms + excluded.latency_sum_ms`;
}
