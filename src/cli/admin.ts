/**
 * Operator CLI (CONTRACT 9): `bun run admin <command> [--flag value]…`.
 * Every command prints exactly one JSON object on stdout; errors print
 * `{"error": "..."}` on stdout and exit 1. Works on DATABASE_URL, or on the
 * embedded database under DATA_DIR: it connects to the server a running
 * service started, and starts one only when none runs.
 *
 *   create-account --email E [--plan P] [--password PW]  → {"account_id","api_key"}
 *   create-key     --email E [--name N]                   → {"account_id","key_id","api_key"}
 *   revoke-key     --email E --key-id K                   → {"account_id","key_id","revoked":true}
 *   set-plan       --email E --plan P                     → the account
 *   set-status     --email E --status active|needs_attention → the account
 *   set-usage      --email E --used N                     → the account with "used"
 *   show-account   --email E                              → the account with "used"
 */
import { ConfigError, configFromProcess } from "../config.ts";
import { openDatabase, type Database } from "../db/client.ts";
import { migrateDatabase } from "../db/migrate.ts";
import { createLogger } from "../lib/log.ts";
import { usedThisMonth } from "../modules/accounts/quota.ts";
import {
  accountView,
  createAccount,
  createApiKey,
  EmailTakenError,
  findAccountByEmail,
  revokeApiKey,
  setPlan,
  setStatus,
  setUsage,
  type Account,
  type AccountStatus,
} from "../modules/accounts/service.ts";
import { isPlanId, PLAN_IDS } from "../modules/billing/plans.ts";

class UsageError extends Error {}

function parseFlags(argv: string[]): Record<string, string> {
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith("--")) throw new UsageError(`unexpected argument ${JSON.stringify(a)}`);
    const eq = a.indexOf("=");
    if (eq > 0) flags[a.slice(2, eq)] = a.slice(eq + 1);
    else {
      const v = argv[i + 1];
      if (v === undefined || v.startsWith("--")) throw new UsageError(`${a} needs a value`);
      flags[a.slice(2)] = v;
      i++;
    }
  }
  return flags;
}

function need(flags: Record<string, string>, name: string): string {
  const v = flags[name];
  if (!v) throw new UsageError(`--${name} is required`);
  return v;
}

function plan(flags: Record<string, string>, required: boolean) {
  const p = required ? need(flags, "plan") : (flags.plan ?? "free");
  if (!isPlanId(p)) throw new UsageError(`--plan must be one of ${PLAN_IDS.join(", ")}`);
  return p;
}

async function account(db: Database["db"], flags: Record<string, string>): Promise<Account> {
  const a = await findAccountByEmail(db, need(flags, "email"));
  if (!a) throw new UsageError("no account with that email");
  return a;
}

/** Runs one command; returns the JSON object to print. */
export async function runAdmin(db: Database["db"], command: string, flags: Record<string, string>, nowMs = Date.now()): Promise<Record<string, unknown>> {
  switch (command) {
    case "create-account": {
      const email = need(flags, "email");
      if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new UsageError("--email is not an email address");
      try {
        const a = await createAccount(db, { email, plan: plan(flags, false), password: flags.password });
        const { key } = await createApiKey(db, a.id);
        return { account_id: a.id, api_key: key };
      } catch (err) {
        if (err instanceof EmailTakenError) throw new UsageError(err.message);
        throw err;
      }
    }
    case "create-key": {
      const a = await account(db, flags);
      const k = await createApiKey(db, a.id, flags.name ?? "default");
      return { account_id: a.id, key_id: k.id, api_key: k.key };
    }
    case "revoke-key": {
      const a = await account(db, flags);
      const keyId = need(flags, "key-id");
      if (!(await revokeApiKey(db, a.id, keyId))) throw new UsageError("no such active key on this account");
      return { account_id: a.id, key_id: keyId, revoked: true };
    }
    case "set-plan": {
      const a = await account(db, flags);
      return accountView((await setPlan(db, a.id, plan(flags, true)))!);
    }
    case "set-status": {
      const a = await account(db, flags);
      const s = need(flags, "status");
      if (s !== "active" && s !== "needs_attention") throw new UsageError("--status must be active or needs_attention");
      return accountView((await setStatus(db, a.id, s as AccountStatus))!);
    }
    case "set-usage": {
      const a = await account(db, flags);
      const used = Number(need(flags, "used"));
      if (!Number.isSafeInteger(used) || used < 0) throw new UsageError("--used must be a whole number >= 0");
      await setUsage(db, a.id, used, nowMs);
      return { ...accountView(a), used };
    }
    case "show-account": {
      const a = await account(db, flags);
      return { ...accountView(a), used: await usedThisMonth(db, a.id, nowMs) };
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}; one of create-account, create-key, revoke-key, set-plan, set-status, set-usage, show-account`);
  }
}

if (import.meta.main) {
  const [command = "", ...rest] = process.argv.slice(2);
  let database: Database | undefined;
  let code = 0;
  try {
    const flags = parseFlags(rest);
    const config = configFromProcess();
    database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, log: createLogger("silent"), max: 2 });
    await migrateDatabase(database.url);
    console.log(JSON.stringify(await runAdmin(database.db, command, flags)));
  } catch (err) {
    code = 1;
    const known = err instanceof UsageError || err instanceof ConfigError;
    console.log(JSON.stringify({ error: known ? (err as Error).message : "unexpected error (see stderr)" }));
    if (!known) console.error((err as Error).message);
  } finally {
    await database?.close();
  }
  process.exit(code);
}
