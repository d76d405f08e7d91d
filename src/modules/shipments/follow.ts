/**
 * `POST /v1/shipments` (docs/shipments.md): follow up to 100 shipments in one
 * call, without calling any courier now. Accepted shipments are stored (or
 * found) and made due for a re-check at once, so the normal re-check path
 * looks them up within seconds; from then on they are followed exactly as if
 * tracked with `GET /v1/track`.
 *
 * Quota (decision, docs/shipments.md): reserved per item, in request order,
 * inside the one transaction that writes the follows. The account's counter
 * row is locked first, so concurrent calls of one account serialise; the
 * first items that fit in what is left of the month are accepted, the rest
 * answer `quota_exceeded`. The counter can never pass the quota, and a
 * failed call counts nothing. An item the account already follows (or a
 * duplicate within the call) is `accepted` and counted once, not again.
 */
import type { AppDeps } from "../../deps.ts";
import { AppError, type ErrorCode } from "../../errors.ts";
import { newId } from "../../lib/ids.ts";
import { periodOf } from "../accounts/quota.ts";
import type { AuthContext } from "../accounts/service.ts";
import { planOf } from "../../domain/plans.ts";
import { resolveCourierParam } from "../couriers/auto.ts";
import { resolveRequest } from "../tracking/service.ts";
import type { FollowShipmentsInput } from "./model.ts";

type Deps = Pick<AppDeps, "db" | "clock" | "log" | "config" | "backends">;

export interface FollowResult {
  courier: string;
  tracking_number: string;
  result: "accepted" | "invalid" | "quota_exceeded";
  already_followed?: boolean;
  error?: { code: ErrorCode; message: string; candidates?: string[] };
}

interface Valid {
  index: number;
  courier: string;
  awb: string;
  followMode: "scheduled" | "lookup";
}

/** Validates one item the way `/v1/track` would; an invalid one carries the code /v1/track would answer. */
function check(deps: Deps, item: { courier: string; tracking_number: string }): { ok: Omit<Valid, "index"> } | { err: FollowResult } {
  try {
    const slug = resolveCourierParam(item.courier, item.tracking_number);
    const { courier, awb } = resolveRequest(deps, slug, item.tracking_number);
    if (courier.follow !== "scheduled")
      throw new AppError("COURIER_NOT_SUPPORTED", `${courier.name} shipments are followed only when looked up (spec: lookup-only couriers); use GET /v1/track.`);
    return { ok: { courier: courier.slug, awb, followMode: courier.follow } };
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    const error: FollowResult["error"] = { code: e.code, message: e.message, ...(e.extra.candidates ? { candidates: e.extra.candidates } : {}) };
    return { err: { courier: item.courier, tracking_number: item.tracking_number, result: "invalid", error } };
  }
}

/**
 * Follows the items for the authenticated account. Returns one result per
 * item in request order, and how many units of quota the call counted.
 * @throws AppError ACCOUNT_NEEDS_ATTENTION (402) for the whole call, as /v1/track.
 */
export async function followShipments(deps: Deps, auth: AuthContext, input: FollowShipmentsInput): Promise<{ shipments: FollowResult[]; accepted: number; counted: number }> {
  if (auth.account.status === "needs_attention")
    throw new AppError("ACCOUNT_NEEDS_ATTENTION", "This account needs attention; contact support to restore tracking.");
  const results: FollowResult[] = [];
  const valid: Valid[] = [];
  input.shipments.forEach((item, index) => {
    const c = check(deps, item);
    if ("err" in c) results[index] = c.err;
    else valid.push({ index, ...c.ok });
  });
  const quota = planOf(auth.account.plan).monthly_quota;
  const nowMs = deps.clock.now();
  const counted = valid.length ? await followValid(deps, auth.account.id, quota, nowMs, valid, results) : 0;
  return { shipments: results, accepted: results.filter((r) => r.result === "accepted").length, counted };
}

/** The transaction: lock the counter, see what is already followed, grant what fits, write shipments and follows. Fills `results`. */
async function followValid(deps: Deps, accountId: string, quota: number, nowMs: number, valid: Valid[], results: FollowResult[]): Promise<number> {
  const now = new Date(nowMs).toISOString();
  const period = periodOf(nowMs);
  const sql = deps.db.$client;
  return (await sql.begin(async (tx) => {
    // The counter row lock serialises this account's follow calls (and its /v1/track reservations):
    // the "already followed" read below then sees every earlier call's committed follows.
    await tx`insert into usage_counters (account_id, period, used) values (${accountId}, ${period}, 0) on conflict do nothing`;
    const [{ used }] = (await tx`select used from usage_counters where account_id = ${accountId} and period = ${period} for update`) as unknown as [{ used: number }];
    const keys = valid.map((v) => ({ courier: v.courier, awb: v.awb }));
    const followed = new Set(
      ((await tx`
        select s.courier || '/' || s.tracking_number as k
        from jsonb_to_recordset(${JSON.stringify(keys)}::jsonb) as v(courier text, awb text)
        join shipments s on s.courier = v.courier and s.tracking_number = v.awb
        join follows f on f.shipment_id = s.id and f.account_id = ${accountId}
      `) as unknown as { k: string }[]).map((r) => r.k),
    );
    let left = Math.max(0, quota - used);
    const fresh: Valid[] = [];
    const seen = new Set<string>();
    for (const v of valid) {
      const k = `${v.courier}/${v.awb}`;
      const base = { courier: v.courier, tracking_number: v.awb };
      if (followed.has(k) || seen.has(k)) results[v.index] = { ...base, result: "accepted", already_followed: true };
      else if (left > 0) {
        left--;
        seen.add(k);
        fresh.push(v);
        results[v.index] = { ...base, result: "accepted", already_followed: false };
      } else results[v.index] = { ...base, result: "quota_exceeded", error: { code: "QUOTA_EXCEEDED", message: `Monthly quota of ${quota} tracking requests used up; upgrade at ${deps.config.publicBaseUrl}/dashboard/billing` } };
    }
    if (fresh.length === 0) return 0;
    const rows = fresh.map((v) => ({ id: newId("shp"), courier: v.courier, awb: v.awb, mode: v.followMode }));
    // Store the shipments nobody has stored yet (state pending, never checked), then follow them all.
    await tx`
      insert into shipments (id, courier, tracking_number, follow_mode, created_at, updated_at)
      select v.id, v.courier, v.awb, v.mode, ${now}, ${now}
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as v(id text, courier text, awb text, mode text)
      on conflict (courier, tracking_number) do nothing
    `;
    // Due now unless terminal or already scheduled: the re-check job (every few seconds) looks it up.
    await tx`
      with v as (select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as v(courier text, awb text)),
      s as (select s.id from shipments s join v on s.courier = v.courier and s.tracking_number = v.awb),
      f as (
        insert into follows (account_id, shipment_id, created_at) select ${accountId}, s.id, ${now} from s
        on conflict do nothing returning shipment_id
      )
      update shipments set followers = followers + 1,
        next_check_at = case when terminal then null when next_check_at is null or last_checked_at is null then least(coalesce(next_check_at, ${now}), ${now}) else next_check_at end
      where id in (select shipment_id from f)
    `;
    await tx`update usage_counters set used = used + ${fresh.length} where account_id = ${accountId} and period = ${period}`;
    return fresh.length;
  })) as number;
}
