/** Accounts and API keys: plain functions over `db | tx`, used by the auth plugin, the operator CLI and the dashboard. */
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import { accounts, apiKeys } from "../../db/schema/index.ts";
import { newId } from "../../lib/ids.ts";
import type { PlanId } from "../../domain/plans.ts";
import { notifyAccountChanged, type CachedAuth } from "./auth-cache.ts";
import { generateApiKey, hashApiKey, keyDisplayPrefix } from "./keys.ts";
import { periodOf } from "./quota.ts";
import { dayOf } from "./quota-days.ts";
import type { KeyUse } from "./key-use.ts";
import type { RateCounter } from "./rate-counter.ts";
import { hashPassword } from "./password.ts";
import { recordAlert } from "../alerts/record.ts";

export type Account = typeof accounts.$inferSelect;
export type AccountStatus = "active" | "needs_attention";

/** What the auth plugin resolves for a request. */
export interface AuthContext {
  account: Pick<Account, "id" | "email" | "plan" | "status">;
  keyId: string;
}

export class EmailTakenError extends Error {
  constructor() {
    super("an account with this email already exists");
  }
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Creates an account (password hashed with argon2id). @throws EmailTakenError when the email is taken */
export async function createAccount(
  db: DbOrTx,
  input: { email: string; password?: string; plan?: PlanId },
): Promise<Account> {
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  const rows = await db
    .insert(accounts)
    .values({ id: newId("acc"), email: normaliseEmail(input.email), passwordHash, plan: input.plan ?? "free" })
    .onConflictDoNothing({ target: accounts.email })
    .returning();
  if (!rows[0]) throw new EmailTakenError();
  return rows[0];
}

export async function findAccountByEmail(db: DbOrTx, email: string): Promise<Account | undefined> {
  const rows = await db
    .select()
    .from(accounts)
    .where(eq(accounts.email, normaliseEmail(email)))
    .limit(1);
  return rows[0];
}

export async function findAccount(db: DbOrTx, id: string): Promise<Account | undefined> {
  const rows = await db.select().from(accounts).where(eq(accounts.id, id)).limit(1);
  return rows[0];
}

/**
 * Issues a new API key; returns the raw key (shown once) and its id. `alert` (default true) queues the owner's
 * `api_key_created` alert with it, due at `nowMs` (default the system clock: the CLI; docs/alerts.md); the first key
 * of a new account has none.
 */
export async function createApiKey(
  db: DbOrTx,
  accountId: string,
  name = "default",
  opts: { alert?: boolean; nowMs?: number } = {},
): Promise<{ id: string; key: string; prefix: string }> {
  const key = generateApiKey();
  const id = newId("key");
  const prefix = keyDisplayPrefix(key);
  await db.transaction(async (tx) => {
    await tx.insert(apiKeys).values({ id, accountId, keyHash: hashApiKey(key), prefix, name });
    if (opts.alert ?? true)
      await recordAlert(tx, {
        accountId,
        kind: "api_key_created",
        dedupeKey: id,
        details: { key_id: id, name, prefix },
        at: opts.nowMs ?? Date.now(),
      });
  });
  return { id, key, prefix: keyDisplayPrefix(key) };
}

/** Revokes a key of this account; false when no such live key exists. */
export async function revokeApiKey(db: DbOrTx, accountId: string, keyId: string): Promise<boolean> {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  if (rows.length > 0) await notifyAccountChanged(db, accountId);
  return rows.length > 0;
}

/** The account's keys, newest first; `keyUse`'s pending notes are written first, so `lastUsedAt` includes them. */
export async function listApiKeys(db: Db, accountId: string, keyUse?: KeyUse) {
  await keyUse?.flush();
  return db
    .select({
      id: apiKeys.id,
      prefix: apiKeys.prefix,
      name: apiKeys.name,
      createdAt: apiKeys.createdAt,
      lastUsedAt: apiKeys.lastUsedAt,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .where(eq(apiKeys.accountId, accountId))
    .orderBy(desc(apiKeys.createdAt));
}

/** The live keys among `hashes` with their accounts, in one statement (a tagged template: prepared once per connection). */
export async function loadKeys(db: Db, hashes: string[]): Promise<Map<string, CachedAuth>> {
  const rows = await db.$client<
    { key_hash: string; key_id: string; id: string; email: string; plan: string; status: string }[]
  >`
    select k.key_hash, k.id as key_id, a.id, a.email, a.plan, a.status
    from api_keys k join accounts a on a.id = k.account_id
    where k.key_hash = any(${hashes}::text[]) and k.revoked_at is null`;
  return new Map(
    rows.map((r) => [
      r.key_hash,
      { keyId: r.key_id, account: { id: r.id, email: r.email, plan: r.plan, status: r.status } },
    ]),
  );
}

/** Counts one request in its per-minute window in process; returns the count including it. */
export function countRequest(counter: RateCounter, accountId: string, windowStartMs: number): number {
  return counter.hit(accountId, windowStartMs);
}

/** Changes the plan; every replica sees the new limits at once ({@link notifyAccountChanged}). */
export async function setPlan(db: DbOrTx, accountId: string, plan: PlanId): Promise<Account | undefined> {
  const rows = await db
    .update(accounts)
    .set({ plan, updatedAt: new Date() })
    .where(eq(accounts.id, accountId))
    .returning();
  if (rows[0]) await notifyAccountChanged(db, accountId);
  return rows[0];
}

/** Changes the status; every replica sees it at once ({@link notifyAccountChanged}). */
export async function setStatus(db: DbOrTx, accountId: string, status: AccountStatus): Promise<Account | undefined> {
  const rows = await db
    .update(accounts)
    .set({ status, updatedAt: new Date() })
    .where(eq(accounts.id, accountId))
    .returning();
  if (rows[0]) await notifyAccountChanged(db, accountId);
  return rows[0];
}

/**
 * Sets this month's `/v1/track` count (support corrections through the operator CLI); today's `usage_daily` row takes
 * the difference, so the month's days still sum to it (quota-days.ts).
 */
export async function setUsage(db: DbOrTx, accountId: string, used: number, nowMs: number): Promise<void> {
  const period = periodOf(nowMs);
  const day = dayOf(nowMs);
  await db.execute(sql`
    with m as (
      insert into usage_counters (account_id, period, used) values (${accountId}, ${period}, ${used})
      on conflict (account_id, period) do update set used = excluded.used returning used),
    o as (select coalesce(sum(used), 0)::int as n from usage_daily where account_id = ${accountId} and to_char(day, 'YYYY-MM') = ${period} and day <> ${day}::date)
    insert into usage_daily (account_id, day, used) select ${accountId}, ${day}::date, m.used - o.n from m, o
    on conflict (account_id, day) do update set used = excluded.used`);
}

/** Public view of an account (never the password hash or secrets). */
export function accountView(a: Account) {
  return { account_id: a.id, email: a.email, plan: a.plan, status: a.status, created_at: a.createdAt.toISOString() };
}
