/** Rate limits shared by replicas (spec-map Decisions: Per-minute rate limit, Demo limit). */
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { rateWindows } from "../../db/schema/index.ts";
import { DEMO_WINDOW_MS, demoDecision, type DemoDecision } from "../../domain/limits.ts";

/** The per-account rate limit's window, ms (spec: Limits, "requests per minute" per plan). */
export const RATE_LIMIT_WINDOW_MS = 60_000;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (>= 1). */
  resetSeconds: number;
}

export function windowStart(nowMs: number, windowMs: number): number {
  return Math.floor(nowMs / windowMs) * windowMs;
}

export function decide(count: number, limit: number, windowMs: number, nowMs: number): RateDecision {
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(1, Math.ceil((windowStart(nowMs, windowMs) + windowMs - nowMs) / 1000)),
  };
}

/** Counts one request against `key` in the current window of `windowMs` and decides. */
export async function hitFixedWindow(
  db: Db,
  key: string,
  limit: number,
  windowMs: number,
  nowMs: number,
): Promise<RateDecision> {
  const rows = await db
    .insert(rateWindows)
    .values({ key, windowStart: new Date(windowStart(nowMs, windowMs)), count: 1 })
    .onConflictDoUpdate({
      target: [rateWindows.key, rateWindows.windowStart],
      set: { count: sql`${rateWindows.count} + 1` },
    })
    .returning({ count: rateWindows.count });
  return decide(rows[0]?.count ?? 1, limit, windowMs, nowMs);
}

/** `RateLimit-*` headers for a decision (sent on every successful /v1 response too). */
export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return {
    "ratelimit-limit": String(d.limit),
    "ratelimit-remaining": String(d.remaining),
    "ratelimit-reset": String(d.resetSeconds),
  };
}

/** Demo limit: counts `ip`'s hits in the window, decides by src/domain/limits.ts, records an admitted hit. */
export async function hitDemo(db: Db, ip: string, limit: number, nowMs: number): Promise<DemoDecision> {
  return db.transaction(async (tx) => {
    // Serialise hits of one IP across replicas; the lock ends with the transaction.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`demo:${ip}`}, 0))`);
    // ISO text + cast: drizzle's raw `sql` hands Date objects to the driver unserialised.
    const since = new Date(nowMs - DEMO_WINDOW_MS).toISOString();
    const rows = await tx.execute<{ n: number; oldest: string | null }>(
      sql`select count(*)::int as n, min(at) as oldest from (select at from demo_hits where ip = ${ip} and at > ${since}::timestamptz order by at desc limit ${limit}) h`,
    );
    const decision = demoDecision(
      Number(rows[0]?.n ?? 0),
      rows[0]?.oldest ? new Date(rows[0].oldest).getTime() : null,
      nowMs,
      limit,
    );
    if (decision.allowed)
      await tx.execute(
        sql`insert into demo_hits (ip, at) values (${ip}, ${new Date(nowMs).toISOString()}::timestamptz)`,
      );
    return decision;
  });
}
