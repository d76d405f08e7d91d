/**
 * A runner's runs of re-check chunks (docs/rechecks.md, "Re-checks in chunks"): lease a due chunk, hand out its
 * members in shipment order, keep a cursor of what is done, and move the chunk's due time one interval on; the
 * lease statements are the claim engine's (`chunkQueue`), the cursor write and an empty chunk's delete the walk's.
 */
import type { Db } from "../../db/client.ts";
import { frag } from "../../jobs/fragment.ts";
import { defineQueue } from "../../jobs/queue.ts";
import { nextRecheckAt } from "../../domain/following.ts";

/** A shipment claimed for a re-check. */
export interface ClaimedShipment {
  id: string;
  courier: string;
  tracking_number: string;
  recheck_failures: number;
  /** The chunk whose run claimed it (its lease is the chunk's); null when claimed on its own due time. */
  chunk?: string | null;
}

/** Members finished between two writes of a run's cursor (its WAL is shared by that many re-checks). */
export const CURSOR_EVERY = 50;
/** Chunks one claim call may take, so that a run of empty chunks cannot hold a claim for long. */
const TAKE_PER_CLAIM = 8;

/** `recheck_chunks` on the claim engine; a chunk keeps its due time when given back (the run resumes at its cursor). */
export const chunkQueue = defineQueue<{ id: string; courier: string; cursor: string | null }>("recheck_chunks", {
  key: "id",
  keyType: "bigint",
  returning: "q.id::text as id, q.courier, q.cursor",
});

/** One run of a chunk by this walk. */
class ChunkRun {
  /** Last member read (the next read starts after it). */
  after: string;
  exhausted = false;
  /** Members read, in shipment order; `next` indexes the first not finished. */
  readonly order: string[] = [];
  next = 0;
  readonly done = new Set<string>();
  flushed = 0;
  /** The run began at the chunk's start (no cursor), so a chunk found empty can go. */
  readonly fresh: boolean;

  constructor(
    readonly id: string,
    readonly courier: string,
    cursor: string | null,
  ) {
    this.after = cursor ?? "";
    this.fresh = cursor === null;
  }

  /** The last member of the finished prefix; null before the first. */
  get cursor(): string | null {
    return this.order[this.next - 1] ?? null;
  }
}

export class ChunkWalk {
  private readonly runs = new Map<string, ChunkRun>();
  private readonly memberOf = new Map<string, string>();

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

  private async take(nowMs: number, leaseMs: number, exclude: readonly string[]): Promise<ChunkRun | undefined> {
    const sql = this.db.$client;
    const now = new Date(nowMs).toISOString();
    const where = exclude.length ? frag`courier not in ${sql(exclude as string[])}` : undefined;
    const [c] = await chunkQueue.claim(sql, {
      nowMs,
      limit: 1,
      leaseMs,
      owner: this.owner,
      where,
      // A run taken over after its cursor keeps its start: its members' check time.
      set: frag`started_at = case when q.cursor is null or q.started_at is null then ${now}::timestamptz else q.started_at end`,
    });
    if (!c) return undefined;
    const r = new ChunkRun(c.id, c.courier, c.cursor);
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
      r.after = m.id;
      this.memberOf.set(m.id, r.id);
    }
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
    if (!ok) return this.drop(r);
    r.done.add(row.id);
    while (r.next < r.order.length && r.done.has(r.order[r.next] ?? "")) r.next++;
    if (r.exhausted && r.next === r.order.length) return this.settle(r);
    if (r.next - r.flushed < CURSOR_EVERY) return;
    r.flushed = r.next;
    await this.db.$client`update recheck_chunks set cursor = ${r.cursor}
      where id = ${r.id} and lease_owner = ${this.owner}`;
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
    const next = frag`due_at = ${due}, last_run_at = started_at, started_at = null, cursor = null`;
    await chunkQueue.settle(sql, r.id, this.owner, next);
  }

  /** Renews the leases of the chunks held to `untilMs`; returns those of `ids` whose chunk kept its lease. @throws on DB errors */
  async renew(ids: readonly string[], untilMs: number): Promise<string[]> {
    const asked = [...this.runs.values()];
    if (asked.length === 0) return [];
    const chunks = asked.map((r) => r.id);
    const kept = new Set(await chunkQueue.renew(this.db.$client, chunks, this.owner, untilMs));
    // Only a run this renewal asked for can have lost its lease (one taken meanwhile holds a fresh one).
    for (const r of asked) if (!kept.has(r.id) && this.runs.get(r.id) === r) this.drop(r);
    return ids.filter((id) => kept.has(this.memberOf.get(id) ?? ""));
  }

  /** Gives every chunk held back at its cursor (due as it was, so the next claim resumes it). @throws on DB errors */
  async release(): Promise<number> {
    const runs = [...this.runs.values()];
    for (const r of runs) {
      this.drop(r);
      await chunkQueue.settle(this.db.$client, r.id, this.owner, frag`cursor = coalesce(${r.cursor}, cursor)`);
    }
    return runs.length;
  }
}
