/**
 * API key → account cache: a revoked key is refused (spec: Authentication) within one NOTIFY, never later than
 * {@link AUTH_CACHE_TTL_MS}; lookups and reloads are batched (docs/performance.md, "API key → account").
 */
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
const ACCOUNT_CHANNEL = "account_changed";

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

/** This process's running caches: a change made here reaches them at once, before the NOTIFY comes back. */
const running = new Set<AuthCache>();

/** Tells every replica (NOTIFY at commit) that `accountId`'s keys, plan or status changed: every such change must call it. */
export async function notifyAccountChanged(db: DbOrTx, accountId: string): Promise<void> {
  for (const cache of running) cache.forget(accountId);
  await db.execute(sql`select pg_notify(${ACCOUNT_CHANNEL}, ${accountId})`);
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

/**
 * The key cache of one pool (a service, src/services.ts): batched lookups and background reloads through `load`;
 * entries are served only while this pool's LISTEN is up, and dropped by {@link stop}.
 */
export class AuthCache {
  private readonly entries = new Map<string, Entry>();
  private readonly keysOfAccount = new Map<string, Set<string>>();
  /** Bumped by every invalidation: a lookup that started before one must not store its answer. */
  private epoch = 0;
  private listening: "no" | "starting" | "up" | "stopped" = "no";
  private readonly waiting = new Map<string, Waiter>();
  private readonly reloads = new Set<string>();
  private lookupsQueued = false;
  private reloadTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly db: Db,
    private readonly load: KeyLoader,
  ) {
    running.add(this);
  }

  /**
   * The cached answer for `keyHash` without waiting: the (frozen) account, `null` for a key cached as unknown,
   * `undefined` when the cache cannot answer. `nowMs`: wall-clock ms (entries expire by real time).
   */
  peek(keyHash: string, nowMs = Date.now()): CachedAuth | null | undefined {
    if (!this.ensureListening()) return undefined;
    const hit = this.entries.get(keyHash);
    if (hit === undefined || hit.expiresAt <= nowMs) return undefined;
    if (hit.refreshAt <= nowMs) {
      hit.refreshAt = hit.expiresAt;
      this.reload(keyHash);
    }
    return hit.auth;
  }

  /** The account for `keyHash`; misses of one event-loop turn share one `load`. @throws whatever `load` throws. */
  authenticate(keyHash: string, nowMs = Date.now()): Promise<CachedAuth | undefined> {
    const cached = this.peek(keyHash, nowMs);
    if (cached !== undefined) return Promise.resolve(cached ?? undefined);
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

  /** Drops this cache's entries for `accountId` (no database work). */
  forget(accountId: string): void {
    this.epoch++;
    const hashes = this.keysOfAccount.get(accountId);
    if (!hashes) return;
    for (const h of hashes) this.entries.delete(h);
    this.keysOfAccount.delete(accountId);
  }

  /** Drops every entry and serves none again; the LISTEN connection closes with the pool. */
  stop(): void {
    this.listening = "stopped";
    running.delete(this);
    clearTimeout(this.reloadTimer);
    this.reloadTimer = undefined;
    this.reloads.clear();
    this.clearAll();
  }

  private clearAll(): void {
    this.entries.clear();
    this.keysOfAccount.clear();
    this.epoch++;
  }

  /** Starts this pool's LISTEN once; entries are served only after it is up. */
  private ensureListening(): boolean {
    if (this.listening === "up") return true;
    if (this.listening === "no") {
      this.listening = "starting";
      this.db.$client
        .listen(
          ACCOUNT_CHANNEL,
          (accountId) => this.forget(accountId),
          () => {
            // (Re)connected: what was sent while down is lost, so start empty.
            this.clearAll();
            if (this.listening !== "stopped") this.listening = "up";
          },
        )
        .catch(() => {
          if (this.listening === "starting") this.listening = "no";
        });
    }
    return false;
  }

  private store(keyHash: string, auth: CachedAuth | null, nowMs: number): void {
    if (this.entries.size >= MAX_ENTRIES) this.clearAll();
    this.entries.set(keyHash, { auth, expiresAt: nowMs + AUTH_CACHE_TTL_MS, refreshAt: nowMs + REFRESH_AFTER_MS });
    if (auth) {
      let set = this.keysOfAccount.get(auth.account.id);
      if (!set) {
        set = new Set();
        this.keysOfAccount.set(auth.account.id, set);
      }
      set.add(keyHash);
    }
  }

  private reload(keyHash: string): void {
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
        (found) => {
          for (const [h, w] of part) w.resolve(found.get(h));
        },
        (error) => {
          for (const [, w] of part) w.reject(error);
        },
      );
    }
  }

  private runReloads(): void {
    this.reloadTimer = undefined;
    const hashes = [...this.reloads];
    this.reloads.clear();
    for (let i = 0; i < hashes.length; i += MAX_BATCH)
      this.loadAndStore(hashes.slice(i, i + MAX_BATCH)).catch(() => {});
  }

  /** Loads `hashes` in one statement and caches the answers, unless an invalidation raced the statement. */
  private async loadAndStore(hashes: string[]): Promise<Map<string, CachedAuth>> {
    const usable = this.listening === "up";
    const started = this.epoch;
    const loaded = await this.load(this.db, hashes);
    const found = new Map<string, CachedAuth>();
    const nowMs = Date.now();
    const keep = usable && started === this.epoch && this.listening === "up";
    for (const h of hashes) {
      const l = loaded.get(h);
      const auth = l ? Object.freeze({ keyId: l.keyId, account: Object.freeze({ ...l.account }) }) : null;
      if (auth) found.set(h, auth);
      if (keep) this.store(h, auth, nowMs);
    }
    return found;
  }
}
