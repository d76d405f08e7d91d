/**
 * A runner's runs of re-check chunks (docs/rechecks.md, "Re-checks in chunks"): lease a due chunk, hand out its
 * members in shipment order, keep a cursor of what is done, and move the chunk's due time one interval on.
 */
import type { Db } from "../../db/client.ts";
import { frag, raw, run as runSql } from "../../db/fragment.ts";
import { nextRecheckAt } from "../../domain/following.ts";

/** A shipment claimed for a re-check. */
export interface ClaimedShipment {
  id: string;
  courier: string;
  tracking_number: string;
  recheck_failures: number;
  /** The chunk whose run claimed it (its lease is the chunk's); null when claimed on its own due time. */
  chunk?: number | null;
}

/** Members finished between two writes of a run's cursor (its WAL is shared by that many re-checks). */
export const CURSOR_EVERY = 50;
/** Chunks one claim call may take, so that a run of empty chunks cannot hold a claim for long. */
const TAKE_PER_CLAIM = 8;

interface ChunkRun {
  id: number;
  courier: string;
  startedMs: number;
  /** Last member read (the next read starts after it). */
  after: string;
  exhausted: boolean;
  /** Members read, in shipment order; `next` indexes the first not finished. */
  order: string[];
  next: number;
  done: Set<string>;
  flushed: number;
  /** The run began at the chunk's start (no cursor), so a chunk found empty can go. */
  fresh: boolean;
}

export class ChunkWalk {
  private readonly runs = new Map<number, ChunkRun>();
  private readonly memberOf = new Map<string, number>();

  /** `intervalMs`: RECHECK_INTERVAL_SECONDS in ms; `random` draws the ± 10 % jitter of each chunk's next run; `now` ms. */
  constructor(
    private readonly db: Db,
    private readonly owner: string,
    private readonly o: { intervalMs: number; random?: () => number; now?: () => number },
  ) {}

  /** Up to `limit` members of chunks this walk holds, then of due chunks it leases for `leaseMs`. @throws on DB errors */
  async claim(nowMs: number, limit: number, leaseMs: number, exclude: readonly string[]): Promise<ClaimedShipment[]> {
    const out: ClaimedShipment[] = [];
    for (const r of [...this.runs.values()]) {
      if (out.length >= limit) break;
      if (!r.exhausted && !exclude.includes(r.courier)) out.push(...(await this.read(r, limit - out.length)));
    }
    for (let i = 0; i < TAKE_PER_CLAIM && out.length < limit; i++) {
      const r = await this.take(nowMs, leaseMs, exclude);
      if (!r) break;
      out.push(...(await this.read(r, limit - out.length)));
    }
    return out;
  }

  /** Chunks this walk holds (ids). */
  held(): number[] {
    return [...this.runs.keys()];
  }

  private async take(nowMs: number, leaseMs: number, exclude: readonly string[]): Promise<ChunkRun | undefined> {
    const sql = this.db.$client;
    const now = new Date(nowMs).toISOString();
    const skip = exclude.length ? frag`and courier not in ${sql(exclude as string[])}` : raw("");
    // A run taken over after its cursor keeps its start: its members' check time.
    const [c] = await runSql(
      sql,
      frag`update recheck_chunks c set lease_owner = ${this.owner}, lease_until = ${new Date(nowMs + leaseMs).toISOString()},
        started_at = case when c.cursor is null or c.started_at is null then ${now}::timestamptz else c.started_at end
      where c.id = (select id from recheck_chunks where due_at <= ${now} and (lease_until is null or lease_until <= ${now})
        ${skip} order by due_at limit 1 for update skip locked)
      returning c.id::float8 as id, c.courier, c.cursor, (extract(epoch from c.started_at) * 1000)::float8 as started_ms`,
    );
    if (!c) return undefined;
    const r: ChunkRun = {
      id: c.id as number,
      courier: c.courier as string,
      startedMs: c.started_ms as number,
      after: (c.cursor as string | null) ?? "",
      exhausted: false,
      order: [],
      next: 0,
      done: new Set(),
      flushed: 0,
      fresh: c.cursor === null,
    };
    this.runs.set(r.id, r);
    return r;
  }

  private async read(r: ChunkRun, n: number): Promise<ClaimedShipment[]> {
    const rows = (await this.db.$client`
      select shipment_id as id, courier, tracking_number, failures as recheck_failures
      from recheck_schedule where chunk_id = ${r.id} and due_at is null and shipment_id > ${r.after}
      order by shipment_id limit ${n}`) as unknown as ClaimedShipment[];
    if (rows.length < n) r.exhausted = true;
    for (const m of rows) {
      m.chunk = r.id;
      r.order.push(m.id);
      this.memberOf.set(m.id, r.id);
    }
    if (rows.length) r.after = rows[rows.length - 1]!.id;
    if (r.exhausted && r.next === r.order.length) await this.settle(r);
    return rows;
  }

  /**
   * A member's re-check ended: `ok` when it was recorded (changed, unchanged or failed), else (skipped, not
   * recorded) the walk lets its chunk go, whose lease runs out and whose next run resumes after the cursor.
   * @throws on DB errors (the lease then runs out the same way)
   */
  async finish(row: ClaimedShipment, ok: boolean): Promise<void> {
    if (row.chunk == null) return;
    this.memberOf.delete(row.id);
    const r = this.runs.get(row.chunk);
    if (!r) return;
    if (!ok) {
      this.drop(r);
      return;
    }
    r.done.add(row.id);
    while (r.next < r.order.length && r.done.has(r.order[r.next]!)) r.next++;
    if (r.exhausted && r.next === r.order.length) return this.settle(r);
    if (r.next - r.flushed >= CURSOR_EVERY) {
      r.flushed = r.next;
      await this.db.$client`update recheck_chunks set cursor = ${r.order[r.next - 1]!}
        where id = ${r.id} and lease_owner = ${this.owner}`;
    }
  }

  private drop(r: ChunkRun): void {
    this.runs.delete(r.id);
    for (const id of r.order) this.memberOf.delete(id);
  }

  /**
   * The run is done: the chunk is due one interval (± 10 %) after the run ended, so that no member is checked
   * again sooner than that, however late in the run it came; its members' check time is the run's start.
   */
  private async settle(r: ChunkRun): Promise<void> {
    this.drop(r);
    const sql = this.db.$client;
    if (r.fresh && r.order.length === 0) {
      const gone = await sql`delete from recheck_chunks c where id = ${r.id} and lease_owner = ${this.owner}
        and not exists (select 1 from recheck_schedule where chunk_id = ${r.id}) returning id`;
      if (gone.length) return;
    }
    const due = nextRecheckAt((this.o.now ?? Date.now)(), this.o.intervalMs / 1000, this.o.random).toISOString();
    await sql`update recheck_chunks set due_at = ${due}, last_run_at = started_at, started_at = null, cursor = null,
        lease_until = null, lease_owner = null
      where id = ${r.id} and lease_owner = ${this.owner}`;
  }

  /** Renews the leases of the chunks held to `untilMs`; returns those of `ids` whose chunk kept its lease. @throws on DB errors */
  async renew(ids: readonly string[], untilMs: number): Promise<string[]> {
    const asked = [...this.runs.values()];
    if (asked.length === 0) return [];
    const rows = await this.db.$client`update recheck_chunks set lease_until = ${new Date(untilMs).toISOString()}
      where id = any(${asked.map((r) => r.id)}::bigint[]) and lease_owner = ${this.owner} returning id::float8 as id`;
    const kept = new Set(rows.map((x) => x.id as number));
    // Only a run this renewal asked for can have lost its lease (one taken meanwhile holds a fresh one).
    for (const r of asked) if (!kept.has(r.id) && this.runs.get(r.id) === r) this.drop(r);
    return ids.filter((id) => kept.has(this.memberOf.get(id) ?? -1));
  }

  /** Gives every chunk held back at its cursor (due as it was, so the next claim resumes it). @throws on DB errors */
  async release(): Promise<number> {
    const runs = [...this.runs.values()];
    for (const r of runs) {
      this.drop(r);
      const cursor = r.next > 0 ? r.order[r.next - 1]! : null;
      await this.db.$client`update recheck_chunks set lease_until = null, lease_owner = null,
          cursor = coalesce(${cursor}, cursor)
        where id = ${r.id} and lease_owner = ${this.owner}`;
    }
    return runs.length;
  }
}
