/**
 * The claim engine of the job queues (graphile-worker / pg-boss shape): claim due rows with FOR UPDATE SKIP LOCKED
 * and a lease in ONE statement, commit, do the work, then complete, fail (with the next time) or release them in a
 * second statement that applies only while the claimer still holds the lease; claimers wake on LISTEN/NOTIFY.
 * The owning module declares its table with {@link defineQueue} (scripts/table-writers.ts counts that as its write)
 * and keeps the policy (when next, what counts as done) in src/domain/. Why: docs/architecture.md, "Claim engine".
 */
import type postgres from "postgres";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";

/**
 * A queue table's shape: a text primary key `key`, a due time, `lease_until` (timestamptz, null when free) and, by
 * default, `lease_owner` (text) naming the claimer. Names are code constants, never input.
 */
export interface QueueSpec {
  /** Primary key column (text). */
  key: string;
  /** Select list `claim` returns, over the updated row aliased `q` (e.g. `q.id, q.payload`). */
  returning: string;
  /** Column that `fail` counts up by one (none by default). */
  failures?: string;
  /** The NOTIFY channel that wakes claimers (none: they poll). */
  channel?: string;
  /**
   * What proves a lease is still the caller's: `owner` (default), the `lease_owner` column; `lease`, the lease end
   * itself (a table without `lease_owner`: every row of one claim shares it, see {@link Queue.leaseToken}).
   */
  token?: "owner" | "lease";
  /** Due-time column (default `due_at`); null when the due time lives in another table (release then leaves it). */
  due?: string | null;
  /** What else a row must be for its claimer to change it (SQL over the table, e.g. `state = 'pending'`). */
  live?: string;
  /** How the claim finds the locked rows again: `ctid` (default, no key probe per row) or `key` (partitioned tables). */
  by?: "ctid" | "key";
}

/** What a claim statement needs; times in ms since the epoch, `leaseMs` in ms. */
export interface ClaimArgs {
  nowMs: number;
  limit: number;
  leaseMs: number;
  /** Names the claiming process (kept in `lease_owner`, the token of an `owner` queue; unused by a `lease` one). */
  owner: string;
  /**
   * The rows to claim: a select of `ctid`s (keys when `by: "key"`) ending in `for update skip locked` (default:
   * the due, unleased rows in due order). A queue whose size must not slow its claim brings its own walk.
   */
  candidates?: Fragment;
}

/**
 * The statements of one queue table. Each takes the pool or transaction to run on and throws what the database
 * throws. `token` proves the lease (the claimer's owner name, or {@link Queue.leaseToken} for a `lease` queue).
 */
export interface Queue<Row> {
  readonly table: string;
  readonly channel: string | undefined;
  /** Claims up to `limit` due rows for `leaseMs`; an empty array when none is due. */
  claim(sql: postgres.Sql, a: ClaimArgs): Promise<Row[]>;
  /** The claim as a fragment, to be wrapped (`with c as (…) select …` reading more per row) and {@link run}. */
  claimStatement(a: ClaimArgs): Fragment;
  /** The token a claim made with `a` holds its rows by. */
  leaseToken(a: Pick<ClaimArgs, "nowMs" | "leaseMs" | "owner">): string;
  /** Deletes the rows still held by `token` (done). Returns the rows deleted. */
  complete(sql: postgres.Sql, ids: readonly string[], token: string): Promise<number>;
  /** Counts a failure and makes the row due at `nextAtMs`, while `token` holds it. False when the lease was lost. */
  fail(sql: postgres.Sql, id: string, token: string, nextAtMs: number): Promise<boolean>;
  /** Gives held rows back unprocessed, due at `nowMs` (a stopping process). Returns the rows given back. */
  release(sql: postgres.Sql, ids: readonly string[], token: string, nowMs: number): Promise<number>;
  /** Moves the leases `token` still holds on `ids` to `untilMs` (`owner` queues). Returns the ids renewed. */
  renew(sql: postgres.Sql, ids: readonly string[], token: string, untilMs: number): Promise<string[]>;
  /** Clears leases that ran out on due rows (a claimer died; the row is claimable already). Returns how many. */
  expireLeases(sql: postgres.Sql, nowMs: number): Promise<number>;
  /** Calls `wake` on every NOTIFY of the channel and on each (re)connect of the listening connection. */
  listen(sql: postgres.Sql, wake: () => void): Promise<() => Promise<void>>;
}

/**
 * SQL text and its parameters, composed in JS and sent as ONE tagged-template call by {@link run}: whatever wraps
 * the client (a test's proxy, an EXPLAIN helper) sees the whole statement, as with a hand-written one.
 */
export interface Fragment {
  readonly strings: readonly string[];
  readonly values: readonly unknown[];
}

const isFragment = (v: unknown): v is Fragment => typeof v === "object" && v !== null && "strings" in v && "values" in v && !Array.isArray(v);

/** A fragment from a template; a value that is itself a {@link Fragment} is spliced in, any other is a parameter. */
export function frag(strings: TemplateStringsArray | readonly string[], ...values: unknown[]): Fragment {
  const out = [strings[0]!];
  const vals: unknown[] = [];
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (isFragment(v)) {
      out[out.length - 1] += v.strings[0]!;
      for (let j = 0; j < v.values.length; j++) {
        vals.push(v.values[j]);
        out.push(v.strings[j + 1]!);
      }
    } else {
      vals.push(v);
      out.push("");
    }
    out[out.length - 1] += strings[i + 1]!;
  }
  return { strings: out, values: vals };
}

/** Text spliced in as it is: code constants only (table and column names, fixed expressions), never input. */
export const raw = (text: string): Fragment => ({ strings: [text], values: [] });

/** Runs `f` as one statement on `sql`. */
export function run<T extends readonly object[] = postgres.Row[]>(sql: postgres.Sql, f: Fragment): postgres.PendingQuery<T & postgres.Row[]> {
  const strings = Object.assign([...f.strings], { raw: [...f.strings] }) as unknown as TemplateStringsArray;
  return sql(strings, ...(f.values as postgres.ParameterOrFragment<never>[])) as unknown as postgres.PendingQuery<T & postgres.Row[]>;
}

// Timestamps travel as ISO text: drizzle switches postgres-js's Date (de)serialisers off on this client.
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The statements of queue table `table` (see {@link QueueSpec} for the columns it must have).
 * @throws TypeError from `listen` without `spec.channel`; from `fail`, `expireLeases` and a claim without
 *   candidates when the due time lives in another table (`due: null`).
 */
export function defineQueue<Row>(table: string, spec: QueueSpec): Queue<Row> {
  const byOwner = (spec.token ?? "owner") === "owner";
  const due = spec.due === undefined ? "due_at" : spec.due;
  const [t, k] = [raw(table), raw(spec.key)];
  // The guard of every statement after the claim: the lease is still the caller's (and the row still live).
  const held = (token: string) =>
    frag`${byOwner ? frag`lease_owner = ${token}` : frag`lease_until = ${token}::timestamptz`}${raw(spec.live ? ` and ${spec.live}` : "")}`;
  const free = raw(byOwner ? "lease_until = null, lease_owner = null" : "lease_until = null");
  const dueCol = () => {
    if (!due) throw new TypeError(`queue ${table} keeps its due time elsewhere: bring the claim's candidates, record outcomes yourself`);
    return raw(due);
  };
  const q: Queue<Row> = {
    table,
    channel: spec.channel,
    leaseToken: (a) => (byOwner ? a.owner : iso(a.nowMs + a.leaseMs)),
    claimStatement(a) {
      const now = iso(a.nowMs);
      // Locked with SKIP LOCKED, so concurrent claimers take disjoint rows; the lease columns are in no index
      // (a HOT update), and a lapsed lease matches `lease_until <= now` again: the stale-lease reset. `ctid =
      // any(array(...))` updates the locked rows where they lie, without a primary-key probe per row.
      const candidates =
        a.candidates ??
        frag`select ctid from ${t} where ${dueCol()} <= ${now} and (lease_until is null or lease_until <= ${now})
          order by ${dueCol()} limit ${a.limit} for update skip locked`;
      return frag`
        update ${t} q set lease_until = ${iso(a.nowMs + a.leaseMs)}${byOwner ? frag`, lease_owner = ${a.owner}` : raw("")}
        where q.${raw(spec.by === "key" ? spec.key : "ctid")} = any(array(${candidates}))
        returning ${raw(spec.returning)}
      `;
    },
    async claim(sql, a) {
      return (await run(sql, q.claimStatement(a))) as unknown as Row[];
    },
    async complete(sql, ids, token) {
      if (ids.length === 0) return 0;
      return (await run(sql, frag`delete from ${t} where ${k} = any(${ids}::text[]) and ${held(token)}`)).count;
    },
    async fail(sql, id, token, nextAtMs) {
      const count = raw(spec.failures ? `${spec.failures} = ${spec.failures} + 1,` : "");
      const rows = await run(sql, frag`
        update ${t} set ${count} ${dueCol()} = ${iso(nextAtMs)}, ${free}
        where ${k} = ${id} and ${held(token)}
        returning ${k}
      `);
      return rows.length > 0;
    },
    async release(sql, ids, token, nowMs) {
      if (ids.length === 0) return 0;
      const dueNow = due ? frag`${raw(due)} = ${iso(nowMs)},` : raw("");
      const rows = await run(sql, frag`
        update ${t} set ${dueNow} ${free}
        where ${k} = any(${ids}::text[]) and ${held(token)}
        returning ${k}
      `);
      return rows.length;
    },
    async renew(sql, ids, token, untilMs) {
      if (ids.length === 0) return [];
      const rows = await run<{ id: string }[]>(sql, frag`
        update ${t} set lease_until = ${iso(untilMs)}
        where ${k} = any(${ids}::text[]) and ${held(token)}
        returning ${k} as id
      `);
      return rows.map((r) => r.id);
    },
    async expireLeases(sql, nowMs) {
      const now = iso(nowMs);
      // The predicate on the due time keeps the scan on the due index.
      const rows = await run(sql, frag`update ${t} set ${free} where ${dueCol()} <= ${now} and lease_until <= ${now} returning ${k}`);
      return rows.length;
    },
    listen(sql, wake) {
      if (!spec.channel) throw new TypeError(`queue ${table} has no NOTIFY channel`);
      return listenForWork(sql, spec.channel, wake);
    },
  };
  return q;
}

/**
 * LISTENs on `channel` and calls `wake` on every NOTIFY and on every (re)connect of the listening connection (a
 * notification sent while it was down is lost, so the claimer looks for itself). Resolves once listening, with
 * the function that stops it. A NOTIFY sent inside a transaction arrives at commit, never before.
 * @throws whatever the database throws while subscribing.
 */
export async function listenForWork(sql: postgres.Sql, channel: string, wake: () => void): Promise<() => Promise<void>> {
  const sub = await sql.listen(channel, () => wake(), () => wake());
  return sub.unlisten;
}

/** A held row: its key and when its lease runs out (ms since the epoch; moved on by each renewal). */
export interface HeldLease {
  id: string;
  leaseUntilMs: number;
}

export interface LeaseKeeper {
  /** Renews the leases of every held row to now + leaseMs, ONE statement. @throws whatever the database throws. */
  renew(): Promise<void>;
  /** Starts the heartbeat: {@link LeaseKeeper.renew} every leaseMs / 3 of wall-clock time (a failed one is logged). */
  start(): void;
  stop(): void;
}

/**
 * The heartbeat of a live claimer: its rows stay leased for as long as it holds them, while a dead claimer's rows
 * come free within one lease. `held` lists the rows held now; lease ends are read from `clock`.
 */
export function createLeaseKeeper<Row>(o: { queue: Queue<Row>; sql: postgres.Sql; clock: Clock; owner: string; leaseMs: number; held: () => HeldLease[]; log: Logger }): LeaseKeeper {
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  async function renew(): Promise<void> {
    const held = o.held();
    if (held.length === 0) return;
    const until = o.clock.now() + o.leaseMs;
    const renewed = new Set(await o.queue.renew(o.sql, held.map((r) => r.id), o.owner, until));
    for (const r of held) if (renewed.has(r.id)) r.leaseUntilMs = Math.max(r.leaseUntilMs, until);
  }
  const beat = () =>
    void renew().catch((e) => o.log.warn("leases not renewed; they run out unless the next renewal succeeds", { queue: o.queue.table, owner: o.owner, error: e as Error }));
  return {
    renew,
    start() {
      heartbeat ??= setInterval(beat, Math.max(1, Math.floor(o.leaseMs / 3)));
      heartbeat.unref?.();
    },
    stop() {
      clearInterval(heartbeat);
      heartbeat = undefined;
    },
  };
}
