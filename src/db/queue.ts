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
 * A queue table's shape: a text primary key `key`, `due_at` (timestamptz), `lease_until` (timestamptz, null when
 * free) and `lease_owner` (text), and optionally a failure counter. Names are code constants, never input.
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
}

/** What a claim statement needs; times in ms since the epoch, `leaseMs` in ms. */
export interface ClaimArgs {
  nowMs: number;
  limit: number;
  leaseMs: number;
  /** Names the claiming process (kept in `lease_owner`; every later statement checks it). */
  owner: string;
  /**
   * The rows to claim: a select of `ctid`s ending in `for update skip locked` (default: the due, unleased rows
   * in due order). A queue whose size must not slow its claim brings its own walk (following/claims.ts).
   */
  candidates?: postgres.PendingQuery<postgres.Row[]>;
}

/** The statements of one queue table. Each takes the pool or transaction to run on and throws what the database throws. */
export interface Queue<Row> {
  readonly table: string;
  readonly channel: string | undefined;
  /** Claims up to `limit` due rows for `leaseMs`; an empty array when none is due. */
  claim(sql: postgres.Sql, a: ClaimArgs): Promise<Row[]>;
  /** Deletes the rows `owner` still holds (done). Returns the rows deleted. */
  complete(sql: postgres.Sql, ids: readonly string[], owner: string): Promise<number>;
  /** Counts a failure and makes the row due at `nextAtMs`, while `owner` holds it. False when the lease was lost. */
  fail(sql: postgres.Sql, id: string, owner: string, nextAtMs: number): Promise<boolean>;
  /** Gives held rows back unprocessed, due at `nowMs` (a stopping process). Returns the rows given back. */
  release(sql: postgres.Sql, ids: readonly string[], owner: string, nowMs: number): Promise<number>;
  /** Moves the leases `owner` still holds on `ids` to `untilMs`. Returns the ids renewed. */
  renew(sql: postgres.Sql, ids: readonly string[], owner: string, untilMs: number): Promise<string[]>;
  /** Clears leases that ran out on due rows (a claimer died; the row is claimable already). Returns how many. */
  expireLeases(sql: postgres.Sql, nowMs: number): Promise<number>;
  /** Calls `wake` on every NOTIFY of the channel and on each (re)connect of the listening connection. */
  listen(sql: postgres.Sql, wake: () => void): Promise<() => Promise<void>>;
}

// Timestamps travel as ISO text: drizzle switches postgres-js's Date (de)serialisers off on this client.
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The statements of queue table `table` (see {@link QueueSpec} for the columns it must have).
 * @throws TypeError when `spec.channel` is unset and `listen` is called.
 */
export function defineQueue<Row>(table: string, spec: QueueSpec): Queue<Row> {
  const u = (sql: postgres.Sql) => ({ t: sql.unsafe(table), k: sql.unsafe(spec.key) });
  return {
    table,
    channel: spec.channel,
    async claim(sql, a) {
      const { t } = u(sql);
      const now = iso(a.nowMs);
      // Locked with SKIP LOCKED, so concurrent claimers take disjoint rows; the lease columns are in no index
      // (a HOT update), and a lapsed lease matches `lease_until <= now` again: the stale-lease reset. `ctid =
      // any(array(...))` updates the locked rows where they lie, without a primary-key probe per row.
      const candidates =
        a.candidates ??
        sql`select ctid from ${t} where due_at <= ${now} and (lease_until is null or lease_until <= ${now})
          order by due_at limit ${a.limit} for update skip locked`;
      const rows = await sql`
        update ${t} q set lease_until = ${iso(a.nowMs + a.leaseMs)}, lease_owner = ${a.owner}
        where q.ctid = any(array(${candidates}))
        returning ${sql.unsafe(spec.returning)}
      `;
      return rows as unknown as Row[];
    },
    async complete(sql, ids, owner) {
      if (ids.length === 0) return 0;
      const { t, k } = u(sql);
      return (await sql`delete from ${t} where ${k} = any(${ids as string[]}::text[]) and lease_owner = ${owner}`).count;
    },
    async fail(sql, id, owner, nextAtMs) {
      const { t, k } = u(sql);
      const count = spec.failures ? sql.unsafe(`${spec.failures} = ${spec.failures} + 1,`) : sql``;
      const rows = await sql`
        update ${t} set ${count} due_at = ${iso(nextAtMs)}, lease_until = null, lease_owner = null
        where ${k} = ${id} and lease_owner = ${owner}
        returning ${k}
      `;
      return rows.length > 0;
    },
    async release(sql, ids, owner, nowMs) {
      if (ids.length === 0) return 0;
      const { t, k } = u(sql);
      const rows = await sql`
        update ${t} set due_at = ${iso(nowMs)}, lease_until = null, lease_owner = null
        where ${k} in ${sql(ids as string[])} and lease_owner = ${owner}
        returning ${k}
      `;
      return rows.length;
    },
    async renew(sql, ids, owner, untilMs) {
      if (ids.length === 0) return [];
      const { t, k } = u(sql);
      const rows = await sql<{ id: string }[]>`
        update ${t} set lease_until = ${iso(untilMs)}
        where ${k} = any(${ids as string[]}::text[]) and lease_owner = ${owner}
        returning ${k} as id
      `;
      return rows.map((r) => r.id);
    },
    async expireLeases(sql, nowMs) {
      const { t, k } = u(sql);
      const now = iso(nowMs);
      // The predicate on due_at keeps the scan on the due index.
      const rows = await sql`
        update ${t} set lease_until = null, lease_owner = null
        where due_at <= ${now} and lease_until <= ${now}
        returning ${k}
      `;
      return rows.length;
    },
    listen(sql, wake) {
      if (!spec.channel) throw new TypeError(`queue ${table} has no NOTIFY channel`);
      return listenForWork(sql, spec.channel, wake);
    },
  };
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
