/**
 * The claim engine of the job queues: claim due rows and stamp a lease in ONE statement, commit, work, then
 * complete, fail or release them while the lease is still the claimer's (docs/architecture.md, "Claim engine").
 */
import type postgres from "postgres";
import { type Fragment, frag, raw, run } from "./fragment.ts";

/** A queue table's shape: key, due time, `lease_until`, by default `lease_owner`. Names are code constants. */
export interface QueueSpec {
  key: string;
  /** SQL type of the key when not text (e.g. `bigint`): keys travel as text and are cast, so the key index serves. */
  keyType?: string;
  /** Select list `claim` returns, over the updated row aliased `q` (e.g. `q.id, q.payload`). */
  returning: string;
  /** Column that `fail` counts up by one (none by default). */
  failures?: string;
  /** Column that the claim counts up by one: tries, counted when taken (none by default). */
  tries?: string;
  /** The claim moves the due time to the lease's end too, so a claimer that reads no lease (an older release's) skips the row. */
  dueFollowsLease?: boolean;
  channel?: string;
  /** What proves a lease is the caller's: the `lease_owner` column (default) or the lease end itself. */
  token?: "owner" | "lease";
  /** Due-time column (default `due_at`); null when the due time lives in another table. */
  due?: string | null;
  /** What else a row must be for its claimer to change it (SQL, e.g. `state = 'pending'`). */
  live?: string;
  /** How the claim finds the locked rows again: `ctid` (default, no key probe per row) or `key`. */
  by?: "ctid" | "key";
  /**
   * A partitioned table's partition key and its SQL type (e.g. `created_at`, `timestamptz`): the candidates select
   * it next to the key, and the statements after the claim take {@link PartKeys}, so that each row is found in
   * its one partition (run-time pruning) instead of by a probe of every partition's key index.
   */
  partition?: { column: string; type: string };
}

/** Keys of rows of a partitioned queue: `parts[i]` is the partition key (as text) of the row `ids[i]`. */
interface PartKeys {
  ids: readonly string[];
  parts: readonly string[];
}

/** The rows a statement after the claim changes: keys, or key and partition key for a partitioned queue. */
type Keys = readonly string[] | PartKeys;

const keyCount = (keys: Keys) => ("ids" in keys ? keys.ids.length : keys.length);

/**
 * `a = b` between two columns of a row lookup, written as the closed range `a >= b and a <= b`: no hash or merge join
 * can use it, so the planner's only join is a nested loop that probes the key index per row — on a partitioned table,
 * with the partition key so compared, in one partition per row (run-time pruning), whatever the statistics say.
 */
export const sameKey = (a: string, b: string): Fragment => raw(`${a} >= ${b} and ${a} <= ${b}`);

/** What a claim statement needs; times in ms since the epoch, `leaseMs` in ms. */
interface ClaimArgs {
  nowMs: number;
  limit: number;
  leaseMs: number;
  owner: string;
  /**
   * A select of `ctid`s (keys when `by: "key"`; key and partition key columns, by those names, for a partitioned
   * queue) ending in `for update skip locked`; default: due rows in due order, narrowed by `where`.
   */
  candidates?: Fragment;
  /** A condition the default candidates must also meet (columns of the queue table, unaliased). */
  where?: Fragment;
  /** More assignments of the claim, over the row before it (aliased `q`). */
  set?: Fragment;
}

/** The statements of one queue table; each throws what the database throws. `token` proves the lease. */
export interface Queue<Row> {
  readonly table: string;
  readonly channel: string | undefined;
  claim(sql: postgres.Sql, a: ClaimArgs): Promise<Row[]>;
  /** The claim as a fragment, to be wrapped (reading more per row) and {@link run}. */
  claimStatement(a: ClaimArgs): Fragment;
  leaseToken(a: Pick<ClaimArgs, "nowMs" | "leaseMs" | "owner">): string;
  /** @throws TypeError for plain keys on a partitioned queue. */
  complete(sql: postgres.Sql, ids: Keys, token: string): Promise<number>;
  /** Sets `set` (SQL assignments) and frees the lease on row `id` while the lease holds; false when it was lost. */
  settle(sql: postgres.Sql, id: string | number, token: string, set: Fragment): Promise<boolean>;
  /** Counts a failure and makes the row due at `nextAtMs`; false when the lease was lost. */
  fail(sql: postgres.Sql, id: string, token: string, nextAtMs: number): Promise<boolean>;
  release(sql: postgres.Sql, ids: Keys, token: string, nowMs: number): Promise<number>;
  renew(sql: postgres.Sql, ids: Keys, token: string, untilMs: number): Promise<string[]>;
  expireLeases(sql: postgres.Sql, nowMs: number): Promise<number>;
  listen(sql: postgres.Sql, wake: () => void): Promise<() => Promise<void>>;
}

// Timestamps travel as ISO text: drizzle switches postgres-js's Date (de)serialisers off on this client.
const iso = (ms: number) => new Date(ms).toISOString();

function queueParts(table: string, spec: QueueSpec) {
  const byOwner = (spec.token ?? "owner") === "owner";
  const due = spec.due === undefined ? "due_at" : spec.due;
  const cast = spec.keyType ? `::${spec.keyType}[]` : "";
  return {
    byOwner,
    due,
    t: raw(table),
    k: raw(spec.key),
    // The guard of every statement after the claim: the lease is still the caller's (and the row still live).
    held: (token: string) =>
      frag`${byOwner ? frag`lease_owner = ${token}` : frag`lease_until = ${token}::timestamptz`}${raw(spec.live ? ` and ${spec.live}` : "")}`,
    free: raw(byOwner ? "lease_until = null, lease_owner = null" : "lease_until = null"),
    // Rows by key: `join(kw)` is what the statement joins (after `using` / `from`), `match` its condition; on a
    // partitioned table by (key, partition key), {@link sameKey}.
    rows: (keys: Keys): { join: (kw: string) => Fragment; match: Fragment } => {
      const part = spec.partition;
      const ids = "ids" in keys ? keys.ids : keys;
      if (part && !("ids" in keys))
        throw new TypeError(`queue ${table} is partitioned: pass the partition keys with the keys`);
      if (!part || !("ids" in keys))
        return { join: () => raw(""), match: frag`${raw(spec.key)} = any(${ids}::text[]${raw(cast)})` };
      const u = frag`unnest(${keys.ids}::text[], ${keys.parts}::text[]::${raw(part.type)}[]) as u(u_key, u_part)`;
      return {
        join: (kw) => frag` ${raw(kw)} ${u}`,
        match: frag`${sameKey(`${table}.${spec.key}`, "u.u_key")} and ${sameKey(`${table}.${part.column}`, "u.u_part")}`,
      };
    },
    dueCol: () => {
      if (!due)
        throw new TypeError(
          `queue ${table} keeps its due time elsewhere: bring the claim's candidates, record outcomes yourself`,
        );
      return raw(due);
    },
  };
}

function claimStatementOf(p: ReturnType<typeof queueParts>, spec: QueueSpec, a: ClaimArgs): Fragment {
  const now = iso(a.nowMs);
  // A lapsed lease matches `lease_until <= now` again: the stale-lease reset.
  const candidates =
    a.candidates ??
    frag`select ctid from ${p.t} where ${p.dueCol()} <= ${now} and (lease_until is null or lease_until <= ${now})
      ${a.where ? frag`and (${a.where})` : raw("")} order by ${p.dueCol()} limit ${a.limit} for update skip locked`;
  const until = iso(a.nowMs + a.leaseMs);
  const also = frag`${spec.tries ? raw(`, ${spec.tries} = q.${spec.tries} + 1`) : raw("")}${spec.dueFollowsLease ? frag`, ${p.dueCol()} = ${until}` : raw("")}`;
  const set = frag`lease_until = ${until}${p.byOwner ? frag`, lease_owner = ${a.owner}` : raw("")}${also}${a.set ? frag`, ${a.set}` : raw("")}`;
  const part = spec.partition?.column;
  if (part)
    return frag`
    update ${p.t} q set ${set}
    from (${candidates}) c
    where ${sameKey(`q.${spec.key}`, `c.${spec.key}`)} and ${sameKey(`q.${part}`, `c.${part}`)}
    returning ${raw(spec.returning)}
  `;
  return frag`
    update ${p.t} q set ${set}
    where q.${raw(spec.by === "key" ? spec.key : "ctid")} = any(array(${candidates}))
    returning ${raw(spec.returning)}
  `;
}

/** The statements of queue table `table`. @throws TypeError for a statement its spec cannot serve (no channel, `due: null`). */
export function defineQueue<Row>(table: string, spec: QueueSpec): Queue<Row> {
  const parts = queueParts(table, spec);
  const { byOwner, due, t, k, held, free, dueCol, rows: byKeys } = parts;
  const q: Queue<Row> = {
    table,
    channel: spec.channel,
    leaseToken: (a) => (byOwner ? a.owner : iso(a.nowMs + a.leaseMs)),
    claimStatement: (a) => claimStatementOf(parts, spec, a),
    async claim(sql, a) {
      return (await run(sql, q.claimStatement(a))) as unknown as Row[];
    },
    async complete(sql, ids, token) {
      if (keyCount(ids) === 0) return 0;
      const { join, match } = byKeys(ids);
      return (await run(sql, frag`delete from ${t}${join("using")} where ${match} and ${held(token)}`)).count;
    },
    async settle(sql, id, token, set) {
      const rows = await run(
        sql,
        frag`update ${t} set ${set}, ${free} where ${k} = ${id} and ${held(token)} returning ${k}`,
      );
      return rows.length > 0;
    },
    async fail(sql, id, token, nextAtMs) {
      const count = raw(spec.failures ? `${spec.failures} = ${spec.failures} + 1,` : "");
      const rows = await run(
        sql,
        frag`
        update ${t} set ${count} ${dueCol()} = ${iso(nextAtMs)}, ${free}
        where ${k} = ${id} and ${held(token)}
        returning ${k}
      `,
      );
      return rows.length > 0;
    },
    async release(sql, ids, token, nowMs) {
      if (keyCount(ids) === 0) return 0;
      const dueNow = due ? frag`${raw(due)} = ${iso(nowMs)},` : raw("");
      const { join, match } = byKeys(ids);
      const rows = await run(
        sql,
        frag`
        update ${t} set ${dueNow} ${free}${join("from")}
        where ${match} and ${held(token)}
        returning ${t}.${k}
      `,
      );
      return rows.length;
    },
    async renew(sql, ids, token, untilMs) {
      if (keyCount(ids) === 0) return [];
      const { join, match } = byKeys(ids);
      const rows = await run<{ id: string }[]>(
        sql,
        frag`
        update ${t} set lease_until = ${iso(untilMs)}${join("from")}
        where ${match} and ${held(token)}
        returning ${t}.${k} as id
      `,
      );
      return rows.map((r) => r.id);
    },
    async expireLeases(sql, nowMs) {
      const now = iso(nowMs);
      // The predicate on the due time keeps the scan on the due index.
      const rows = await run(
        sql,
        frag`update ${t} set ${free} where ${dueCol()} <= ${now} and lease_until <= ${now} returning ${k}`,
      );
      return rows.length;
    },
    listen(sql, wake) {
      if (!spec.channel) throw new TypeError(`queue ${table} has no NOTIFY channel`);
      return listenForWork(sql, spec.channel, wake);
    },
  };
  return q;
}

/** LISTENs on `channel`: `wake` on every NOTIFY and (re)connect; resolves with the stop function. @throws on DB errors. */
export async function listenForWork(
  sql: postgres.Sql,
  channel: string,
  wake: () => void,
): Promise<() => Promise<void>> {
  const sub = await sql.listen(
    channel,
    () => wake(),
    () => wake(),
  );
  return sub.unlisten;
}
