/**
 * API key → account cache: a revoked key is refused (spec: Authentication) within one NOTIFY, never later than
 * {@link AUTH_CACHE_TTL_MS}; lookups and reloads are batched (docs/performance.md, "API key → account").
 */
import type postgres from "postgres";
import { sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";

/** Longest time an entry is served, ms (the fallback if a notification is lost). */
export const AUTH_CACHE_TTL_MS = 10_000;
const REFRESH_AFTER_MS = AUTH_CACHE_TTL_MS / 2;
/** How long background reloads are gathered before one statement does them all, ms. */
export const REFRESH_BATCH_MS = 1_000;
const MAX_BATCH = 1_000;
/** Entries kept per process; past this the cache starts again empty. */
const MAX_ENTRIES = 50_000;
/** The LISTEN/NOTIFY channel; the payload is an account id. */
export const ACCOUNT_CHANNEL = "account_changed";

export interface CachedAuth {
  keyId: string;
  account: { id: string; email: string; plan: string; status: string };
}

/** Looks up many key hashes in one statement: the live keys found, by hash (missing: unknown or revoked). */
export type KeyLoader = (db: Db, keyHashes: string[]) => Promise<Map<string, CachedAuth>>;

interface Entry {
  auth: CachedAuth | null;
  expiresAt: number;
  refreshAt: number;
}

const entries = new Map<string, Entry>();
const keysOfAccount = new Map<string, Set<string>>();
/** Bumped by every invalidation: a lookup that started before one must not store its answer. */
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

/** Tells every replica (NOTIFY at commit) that `accountId`'s keys, plan or status changed: every such change must call it. */
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
        // (Re)connected: what was sent while down is lost, so start empty.
        clearAll();
        listening.set(client, "up");
      })
      .catch(() => listening.delete(client));
  }
  return false;
}

function store(keyHash: string, auth: CachedAuth | null, nowMs: number): void {
  if (entries.size >= MAX_ENTRIES) clearAll();
  entries.set(keyHash, { auth, expiresAt: nowMs + AUTH_CACHE_TTL_MS, refreshAt: nowMs + REFRESH_AFTER_MS });
  if (auth) {
    let set = keysOfAccount.get(auth.account.id);
    if (!set) {
      set = new Set();
      keysOfAccount.set(auth.account.id, set);
    }
    set.add(keyHash);
  }
}

interface Waiter {
  promise: Promise<CachedAuth | undefined>;
  resolve: (auth: CachedAuth | undefined) => void;
  reject: (error: unknown) => void;
}

function waiter(): Waiter {
  const w = {} as Waiter;
  w.promise = new Promise((resolve, reject) => Object.assign(w, { resolve, reject }));
  return w;
}

/** The database side of one pool's cache: batched lookups and batched background reloads. */
class KeyBatches {
  private readonly waiting = new Map<string, Waiter>();
  private readonly reloads = new Set<string>();
  private lookupsQueued = false;
  private reloadTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly db: Db,
    private readonly load: KeyLoader,
  ) {}

  lookUp(keyHash: string): Promise<CachedAuth | undefined> {
    let w = this.waiting.get(keyHash);
    if (w) return w.promise;
    w = waiter();
    this.waiting.set(keyHash, w);
    if (!this.lookupsQueued) {
      this.lookupsQueued = true;
      setImmediate(() => this.runLookups());
    }
    return w.promise;
  }

  reload(keyHash: string): void {
    if (this.reloads.has(keyHash)) return;
    this.reloads.add(keyHash);
    if (this.reloadTimer) return;
    this.reloadTimer = setTimeout(() => this.runReloads(), REFRESH_BATCH_MS);
    this.reloadTimer.unref?.();
  }

  private runLookups(): void {
    this.lookupsQueued = false;
    const batch = [...this.waiting];
    this.waiting.clear();
    for (let i = 0; i < batch.length; i += MAX_BATCH) {
      const part = batch.slice(i, i + MAX_BATCH);
      this.loadAndStore(part.map(([h]) => h)).then(
        (found) => { for (const [h, w] of part) w.resolve(found.get(h)); },
        (error) => { for (const [, w] of part) w.reject(error); },
      );
    }
  }

  private runReloads(): void {
    this.reloadTimer = undefined;
    const hashes = [...this.reloads];
    this.reloads.clear();
    for (let i = 0; i < hashes.length; i += MAX_BATCH) this.loadAndStore(hashes.slice(i, i + MAX_BATCH)).catch(() => {});
  }

  /** Loads `hashes` in one statement and caches the answers, unless an invalidation raced the statement. */
  private async loadAndStore(hashes: string[]): Promise<Map<string, CachedAuth>> {
    const usable = listening.get(this.db.$client) === "up";
    const started = epoch;
    const loaded = await this.load(this.db, hashes);
    const found = new Map<string, CachedAuth>();
    const nowMs = Date.now();
    const keep = usable && started === epoch;
    for (const h of hashes) {
      const l = loaded.get(h);
      const auth = l ? Object.freeze({ keyId: l.keyId, account: Object.freeze({ ...l.account }) }) : null;
      if (auth) found.set(h, auth);
      if (keep) store(h, auth, nowMs);
    }
    return found;
  }
}

const batchesOf = new WeakMap<Db, KeyBatches>();

/**
 * The cached answer for `keyHash` without waiting: the (frozen) account, `null` for a key cached as unknown,
 * `undefined` when the cache cannot answer. `nowMs`: wall-clock ms (entries expire by real time).
 */
export function peekCached(db: Db, keyHash: string, nowMs = Date.now()): CachedAuth | null | undefined {
  if (!ensureListening(db.$client)) return undefined;
  const hit = entries.get(keyHash);
  if (hit === undefined || hit.expiresAt <= nowMs) return undefined;
  if (hit.refreshAt <= nowMs) {
    hit.refreshAt = hit.expiresAt;
    batchesOf.get(db)?.reload(keyHash);
  }
  return hit.auth;
}

/**
 * The account for `keyHash` through the cache; misses of one event-loop turn share one `load` (a pool keeps the
 * first `load` it is given). @throws whatever `load` throws.
 */
export async function authenticateCached(db: Db, keyHash: string, load: KeyLoader, nowMs = Date.now()): Promise<CachedAuth | undefined> {
  const cached = peekCached(db, keyHash, nowMs);
  if (cached !== undefined) return cached ?? undefined;
  let batches = batchesOf.get(db);
  if (!batches) {
    batches = new KeyBatches(db, load);
    batchesOf.set(db, batches);
  }
  return batches.lookUp(keyHash);
}
