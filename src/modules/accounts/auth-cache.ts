/**
 * API key → account cache, so that an authenticated request does not pay a
 * database round trip (the key lookup was most of the cost of a `/v1` call).
 *
 * Freshness (spec: Authentication — a revoked key is refused):
 * - every change that matters to authentication (key revoked, plan or status
 *   changed) calls {@link notifyAccountChanged}: it drops this process's
 *   entries of the account at once and sends `NOTIFY account_changed` with
 *   the account id, which every replica LISTENs to (PostgreSQL delivers it
 *   when the writing transaction commits);
 * - entries are served only while this process's LISTEN connection is up;
 *   each (re)connect of it empties the cache, since notifications sent while
 *   it was down are lost;
 * - a lookup that raced an invalidation is not stored (epoch check), and
 *   every entry expires after {@link AUTH_CACHE_TTL_MS} whatever happens.
 * So another replica refuses a revoked key within one NOTIFY delivery
 * (milliseconds), and never later than the TTL.
 *
 * Unknown keys are cached too (as misses): a key is 256 random bits, so a
 * new key cannot already be cached as unknown, and a flood of made-up keys
 * costs one probe per key per TTL instead of one per request.
 */
import type postgres from "postgres";
import { sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";

/** Longest time an entry is served, ms (the fallback if a notification is lost). */
export const AUTH_CACHE_TTL_MS = 10_000;
/** Entries kept per process; past this the cache starts again empty (a flood of keys cannot grow it). */
const MAX_ENTRIES = 50_000;
/** The LISTEN/NOTIFY channel; the payload is an account id. */
export const ACCOUNT_CHANNEL = "account_changed";

/** The account as authentication sees it. */
export interface CachedAuth {
  keyId: string;
  account: { id: string; email: string; plan: string; status: string };
}

interface Entry {
  auth: CachedAuth | null;
  expiresAt: number;
}

const entries = new Map<string, Entry>();
const keysOfAccount = new Map<string, Set<string>>();
/** Bumped by every invalidation: a lookup that started before one must not store its (maybe stale) answer. */
let epoch = 0;
/** Pools whose LISTEN connection is up (only their lookups use the cache). */
const listening = new WeakMap<postgres.Sql, "starting" | "up">();

function clearAll(): void {
  entries.clear();
  keysOfAccount.clear();
  epoch++;
}

/** Drops this process's entries for `accountId` (no database work). */
export function forgetAccount(accountId: string): void {
  epoch++;
  const hashes = keysOfAccount.get(accountId);
  if (!hashes) return;
  for (const h of hashes) entries.delete(h);
  keysOfAccount.delete(accountId);
}

/**
 * Tells every replica that `accountId`'s keys, plan or status changed: drops
 * this process's entries at once and NOTIFYs the others. Inside a
 * transaction the NOTIFY goes out at commit (and not at all on rollback).
 * Callers: key revocation, plan change, status change — any code that
 * changes what {@link authenticateCached} returns must call it.
 */
export async function notifyAccountChanged(db: DbOrTx, accountId: string): Promise<void> {
  forgetAccount(accountId);
  await db.execute(sql`select pg_notify(${ACCOUNT_CHANNEL}, ${accountId})`);
}

/** Starts this pool's LISTEN once; entries are served only after it is up. */
function ensureListening(client: postgres.Sql): boolean {
  const state = listening.get(client);
  if (state === "up") return true;
  if (state === undefined) {
    listening.set(client, "starting");
    client
      .listen(ACCOUNT_CHANNEL, (accountId) => forgetAccount(accountId), () => {
        // (Re)connected: anything sent while the connection was down is lost, so start empty.
        clearAll();
        listening.set(client, "up");
      })
      .catch(() => listening.delete(client));
  }
  return false;
}

/**
 * The cached answer for `keyHash`, without waiting: the account, `null` for a
 * key cached as unknown, `undefined` when the cache cannot answer (not
 * cached, expired, or this pool's LISTEN is not up) — then use
 * {@link authenticateCached}. Cached accounts are frozen: they are shared by
 * every request of the key.
 * @param nowMs wall-clock ms (entries expire by real time, not by a test clock).
 */
export function peekCached(db: Db, keyHash: string, nowMs = Date.now()): CachedAuth | null | undefined {
  if (!ensureListening(db.$client)) return undefined;
  const hit = entries.get(keyHash);
  return hit !== undefined && hit.expiresAt > nowMs ? hit.auth : undefined;
}

/**
 * The account for `keyHash` through the cache; `load` runs on a miss.
 * @param nowMs wall-clock ms (entries expire by real time, not by a test clock).
 */
export async function authenticateCached(db: Db, keyHash: string, load: () => Promise<CachedAuth | undefined>, nowMs = Date.now()): Promise<CachedAuth | undefined> {
  const cached = peekCached(db, keyHash, nowMs);
  if (cached !== undefined) return cached ?? undefined;
  const usable = listening.get(db.$client) === "up";
  const started = epoch;
  const loaded = await load();
  const auth = loaded ? Object.freeze({ keyId: loaded.keyId, account: Object.freeze({ ...loaded.account }) }) : null;
  if (usable && started === epoch) {
    if (entries.size >= MAX_ENTRIES) clearAll();
    entries.set(keyHash, { auth, expiresAt: nowMs + AUTH_CACHE_TTL_MS });
    if (auth) {
      let set = keysOfAccount.get(auth.account.id);
      if (!set) keysOfAccount.set(auth.account.id, (set = new Set()));
      set.add(keyHash);
    }
  }
  return auth ?? undefined;
}
