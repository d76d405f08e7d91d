/** The operator commands behind `bun run admin`: each returns the JSON object to print; operator mistakes throw {@link UsageError}. */
import type { Db } from "../db/client.ts";
import { usedThisMonth } from "../modules/accounts/quota.ts";
import { PASSWORD_MESSAGES, passwordProblem } from "../modules/accounts/password-policy.ts";
import {
  accountView,
  createAccount,
  createApiKey,
  EmailTakenError,
  findAccount,
  findAccountByEmail,
  listApiKeys,
  revokeApiKey,
  setPlan,
  setStatus,
  setUsage,
  type Account,
  type AccountStatus,
} from "../modules/accounts/service.ts";
import { issuePasswordLink } from "../modules/accounts/password-links.ts";
import { isPlanId, PLAN_IDS, type PlanId } from "../domain/plans.ts";
import { rebuildTransitStats } from "../modules/predictions/rebuild.ts";
import { COMPAT_LEVEL, compatLevel, contract } from "../db/compat.ts";
import { moveLegacySchedule } from "../modules/following/claims.ts";
import { forgetScheduleLayout, SCHEDULE_LEVEL } from "../modules/following/layout.ts";
import {
  approveRequest,
  listRequests,
  rejectRequest,
  RequestNotPending,
  requestStateOf,
  settleRequestsFor,
  type UpgradeRequest,
} from "../modules/billing/requests.ts";

export class UsageError extends Error {}

/** Parsed command line: `positionals` excludes the command itself. */
export interface Args {
  positionals: string[];
  flags: Partial<Record<string, string | boolean>>;
}

const flag = (a: Args, name: string): string | undefined => {
  const v = a.flags[name];
  return typeof v === "string" && v !== "" ? v : undefined;
};

function need(v: string | undefined, what: string): string {
  if (!v) throw new UsageError(`${what} is required`);
  return v;
}

function planArg(v: string | undefined, fallback?: PlanId): PlanId {
  const p = v ?? fallback;
  if (!p) throw new UsageError("a plan is required");
  if (!isPlanId(p)) throw new UsageError(`the plan must be one of ${PLAN_IDS.join(", ")}`);
  return p;
}

/** The account named by `--email`, or by the first positional (an email or an `acc_` id). */
async function accountOf(db: Db, a: Args): Promise<Account> {
  const ref = flag(a, "email") ?? a.positionals[0];
  if (!ref) throw new UsageError("an account is required: --email E, or the account's email or id");
  const acc = ref.startsWith("acc_") ? await findAccount(db, ref) : await findAccountByEmail(db, ref);
  if (!acc) throw new UsageError("no account with that email or id");
  return acc;
}

/** The positional after the account when the account came positionally, else the first one. */
const secondArg = (a: Args) => (flag(a, "email") ? a.positionals[0] : a.positionals[1]);

const keyView = (k: Awaited<ReturnType<typeof listApiKeys>>[number]) => ({
  key_id: k.id,
  name: k.name,
  prefix: k.prefix,
  created_at: k.createdAt.toISOString(),
  last_used_at: k.lastUsedAt?.toISOString() ?? null,
  revoked_at: k.revokedAt?.toISOString() ?? null,
});

const requestView = (r: UpgradeRequest) => ({
  request_id: r.id,
  account_id: r.accountId,
  from_plan: r.fromPlan,
  to_plan: r.toPlan,
  status: r.status,
  created_at: r.createdAt.toISOString(),
  decided_at: r.decidedAt?.toISOString() ?? null,
  note: r.note,
});

/** `publicBaseUrl`: PUBLIC_BASE_URL, for the links a command prints. */
type Command = (db: Db, a: Args, nowMs: number, publicBaseUrl: string) => Promise<Record<string, unknown>>;

const COMMANDS: Record<string, Command> = {
  async "create-account"(db, a) {
    const email = need(flag(a, "email") ?? a.positionals[0], "--email");
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new UsageError("--email is not an email address");
    const password = flag(a, "password");
    // The operator's accounts follow the same password policy as dashboard sign-up (NIST SP 800-63B).
    const problem = password === undefined ? undefined : await passwordProblem(password, email);
    if (problem) throw new UsageError(`--password: ${PASSWORD_MESSAGES[problem]}`);
    try {
      const acc = await createAccount(db, { email, plan: planArg(flag(a, "plan"), "free"), password });
      const k = await createApiKey(db, acc.id, "default", { alert: false });
      return { account_id: acc.id, key_id: k.id, api_key: k.key };
    } catch (err) {
      if (err instanceof EmailTakenError) throw new UsageError(err.message);
      throw err;
    }
  },
  async "create-key"(db, a) {
    const acc = await accountOf(db, a);
    const k = await createApiKey(db, acc.id, flag(a, "name") ?? "default");
    return { account_id: acc.id, key_id: k.id, api_key: k.key };
  },
  async "list-keys"(db, a) {
    const acc = await accountOf(db, a);
    const keys = (await listApiKeys(db, acc.id)).map(keyView);
    return { account_id: acc.id, keys, count: keys.length };
  },
  async "revoke-key"(db, a) {
    const acc = await accountOf(db, a);
    const keyId = need(flag(a, "key-id") ?? secondArg(a), "--key-id");
    if (!(await revokeApiKey(db, acc.id, keyId))) throw new UsageError("no such active key on this account");
    return { account_id: acc.id, key_id: keyId, revoked: true };
  },
  async "set-plan"(db, a) {
    const acc = await accountOf(db, a);
    const plan = planArg(flag(a, "plan") ?? secondArg(a));
    const updated = await db.transaction(async (tx) => {
      await settleRequestsFor(tx, acc.id, plan);
      return setPlan(tx, acc.id, plan);
    });
    // The account was deleted between the lookup and the update.
    if (!updated) throw new UsageError("no account with that email or id");
    return accountView(updated);
  },
  async "set-status"(db, a) {
    const acc = await accountOf(db, a);
    const s = need(flag(a, "status") ?? secondArg(a), "--status");
    if (s !== "active" && s !== "needs_attention") throw new UsageError("--status must be active or needs_attention");
    const updated = await setStatus(db, acc.id, s as AccountStatus);
    if (!updated) throw new UsageError("no account with that email or id");
    return accountView(updated);
  },
  async "set-usage"(db, a, nowMs) {
    const acc = await accountOf(db, a);
    const used = Number(need(flag(a, "used") ?? secondArg(a), "--used"));
    if (!Number.isSafeInteger(used) || used < 0) throw new UsageError("--used must be a whole number >= 0");
    await setUsage(db, acc.id, used, nowMs);
    return { ...accountView(acc), used };
  },
  async "show-account"(db, a, nowMs) {
    const acc = await accountOf(db, a);
    const [used, keys, st] = await Promise.all([
      usedThisMonth(db, acc.id, nowMs),
      listApiKeys(db, acc.id),
      requestStateOf(db, acc.id),
    ]);
    const pending = st.pendingRequest
      ? {
          request_id: st.pendingRequest.id,
          to_plan: st.pendingRequest.toPlan,
          created_at: st.pendingRequest.createdAt.toISOString(),
        }
      : null;
    return { ...accountView(acc), used, keys: keys.map(keyView), pending_request: pending };
  },
  async "password-link"(db, a, nowMs, publicBaseUrl) {
    const acc = await accountOf(db, a);
    const link = await issuePasswordLink(db, acc.id, "reset", nowMs);
    return {
      account_id: acc.id,
      email: acc.email,
      url: `${publicBaseUrl}${link.path}`,
      expires_at: link.expiresAt.toISOString(),
    };
  },
  async "rebuild-transit-stats"(db, _a, nowMs) {
    return { ...(await rebuildTransitStats(db, nowMs)) };
  },
  async contract(db) {
    const { from, to } = await contract(db);
    forgetScheduleLayout(db);
    const moved = from < SCHEDULE_LEVEL && to >= SCHEDULE_LEVEL ? await moveLegacySchedule(db) : 0;
    return { compat_level: to, previous: from, ...(moved ? { schedule_rows_moved: moved } : {}) };
  },
  async "show-compat"(db) {
    return { compat_level: await compatLevel(db), build_level: COMPAT_LEVEL };
  },
  async "list-upgrade-requests"(db, a) {
    const rows = await listRequests(db, a.flags.all === true ? undefined : "pending");
    const requests = rows.map((r) => ({ ...requestView(r.request), email: r.email, current_plan: r.currentPlan }));
    return { requests, count: requests.length };
  },
  async "approve-upgrade"(db, a) {
    const id = need(a.positionals[0], "a request id");
    const r = await approveRequest(db, id, flag(a, "note")).catch(rethrowNotPending);
    return requestView(r);
  },
  async "reject-upgrade"(db, a) {
    const id = need(a.positionals[0], "a request id");
    const r = await rejectRequest(db, id, flag(a, "note")).catch(rethrowNotPending);
    return requestView(r);
  },
};

function rethrowNotPending(err: unknown): never {
  if (err instanceof RequestNotPending) throw new UsageError(err.message);
  throw err;
}

export const COMMAND_NAMES = Object.keys(COMMANDS);

/** Runs one command; returns the JSON object to print. @throws UsageError for any operator mistake */
export async function runAdmin(
  db: Db,
  command: string,
  args: Args,
  nowMs = Date.now(),
  publicBaseUrl = "",
): Promise<Record<string, unknown>> {
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!run)
    throw new UsageError(
      `unknown command ${JSON.stringify(command)}; one of ${COMMAND_NAMES.join(", ")} (see: bun run admin help)`,
    );
  return run(db, args, nowMs, publicBaseUrl);
}
