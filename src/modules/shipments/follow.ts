/**
 * `POST /v1/shipments`: follow up to 100 shipments without calling a courier; accepted ones are due for a
 * re-check at once. Quota is reserved per item under the account's counter row lock, never beyond the quota
 * (Why: docs/shipments.md#following-in-bulk--decisions).
 */
import type { AppDeps } from "../../deps.ts";
import { AppError, type ErrorCode } from "../../lib/errors.ts";
import { addUsage, lockUsage, periodOf } from "../accounts/quota.ts";
import { dayOf } from "../accounts/quota-days.ts";
import { recordQuotaMarks } from "../alerts/record.ts";
import type { AuthContext } from "../accounts/service.ts";
import { planOf } from "../../domain/plans.ts";
import { resolveCourierParam } from "../couriers/auto.ts";
import { publicUrlsByAwb } from "../following/public-links.ts";
import {
  followedKeys,
  followMany,
  setFollowData,
  setShipmentPincodes,
  type FollowDataItem,
} from "../following/follows.ts";
import { resolveRequest } from "../tracking/service.ts";
import type { FollowShipmentsInput } from "./model.ts";

type Deps = Pick<AppDeps, "db" | "clock" | "log" | "config" | "backends" | "services" | "secretsKey">;

export interface FollowResult {
  courier: string;
  tracking_number: string;
  result: "accepted" | "invalid" | "quota_exceeded";
  already_followed?: boolean;
  public_url?: string | null;
  error?: { code: ErrorCode; message: string; candidates?: string[] };
}

interface Valid {
  index: number;
  courier: string;
  awb: string;
  followMode: "scheduled" | "lookup";
  reference?: string;
  metadata?: Record<string, string>;
  originPincode?: string;
  destinationPincode?: string;
}

/** Validates one item the way `/v1/track` would; an invalid one carries the code /v1/track would answer. */
function check(
  deps: Deps,
  item: { courier: string; tracking_number: string },
): { ok: Omit<Valid, "index"> } | { err: FollowResult } {
  try {
    const slug = resolveCourierParam(item.courier, item.tracking_number);
    const { courier, awb } = resolveRequest(deps, slug, item.tracking_number);
    if (courier.follow !== "scheduled")
      throw new AppError(
        "COURIER_NOT_SUPPORTED",
        `${courier.name} shipments are followed only when looked up (spec: lookup-only couriers); use GET /v1/track.`,
      );
    return { ok: { courier: courier.slug, awb, followMode: courier.follow } };
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    const error: FollowResult["error"] = {
      code: e.code,
      message: e.message,
      ...(e.extra.candidates ? { candidates: e.extra.candidates } : {}),
    };
    return { err: { courier: item.courier, tracking_number: item.tracking_number, result: "invalid", error } };
  }
}

/**
 * Follows the items for the authenticated account: one result per item in request order, and the units counted.
 * @throws AppError ACCOUNT_NEEDS_ATTENTION (402) for the whole call, as /v1/track.
 */
export async function followShipments(
  deps: Deps,
  auth: AuthContext,
  input: FollowShipmentsInput,
): Promise<{ shipments: FollowResult[]; accepted: number; counted: number }> {
  if (auth.account.status === "needs_attention")
    throw new AppError("ACCOUNT_NEEDS_ATTENTION", "This account needs attention; contact support to restore tracking.");
  const results: FollowResult[] = [];
  const valid: Valid[] = [];
  input.shipments.forEach((item, index) => {
    const c = check(deps, item);
    if ("err" in c) results[index] = c.err;
    else
      valid.push({
        index,
        ...c.ok,
        ...(item.reference !== undefined ? { reference: item.reference } : {}),
        ...(item.metadata ? { metadata: item.metadata } : {}),
        ...(item.origin_pincode ? { originPincode: item.origin_pincode } : {}),
        ...(item.destination_pincode ? { destinationPincode: item.destination_pincode } : {}),
      });
  });
  const quota = planOf(auth.account.plan).monthly_quota;
  const nowMs = deps.clock.now();
  const counted = valid.length ? await followValid(deps, auth.account.id, quota, nowMs, valid, results) : 0;
  const accepted = results.filter((r) => r.result === "accepted");
  const urls = await publicUrlsByAwb(deps, auth.account.id, accepted);
  for (const r of accepted) r.public_url = urls.get(`${r.courier}/${r.tracking_number}`) ?? null;
  return { shipments: results, accepted: results.filter((r) => r.result === "accepted").length, counted };
}

/** The transaction: lock the counter, read what is followed, grant what fits, write follows, count units. */
async function followValid(
  deps: Deps,
  accountId: string,
  quota: number,
  nowMs: number,
  valid: Valid[],
  results: FollowResult[],
): Promise<number> {
  const now = new Date(nowMs).toISOString();
  const period = periodOf(nowMs);
  // In turn with this process's quota blocks, so a later /v1/track `usage.used` includes these units.
  return deps.services.quotaLeases.counting(
    accountId,
    period,
    async () =>
      (await deps.db.$client.begin(async (tx) => {
        // The counter row lock serialises this account's follow calls, so the read below sees earlier follows.
        const used = await lockUsage(tx, accountId, period);
        const followed = await followedKeys(
          tx,
          accountId,
          valid.map((v) => ({ courier: v.courier, awb: v.awb })),
        );
        let left = Math.max(0, quota - used);
        const fresh: Valid[] = [];
        const seen = new Set<string>();
        for (const v of valid) {
          const k = `${v.courier}/${v.awb}`;
          const base = { courier: v.courier, tracking_number: v.awb };
          if (followed.has(k) || seen.has(k))
            results[v.index] = { ...base, result: "accepted", already_followed: true };
          else if (left > 0) {
            left--;
            seen.add(k);
            fresh.push(v);
            results[v.index] = { ...base, result: "accepted", already_followed: false };
          } else
            results[v.index] = {
              ...base,
              result: "quota_exceeded",
              error: {
                code: "QUOTA_EXCEEDED",
                message: `Monthly quota of ${quota} tracking requests used up; upgrade at ${deps.config.publicBaseUrl}/dashboard/billing`,
              },
            };
        }
        if (fresh.length > 0) await followMany(tx, accountId, fresh, now);
        await setFollowData(tx, accountId, followDataOf(valid, results));
        const accepted = valid.filter((v) => results[v.index]?.result === "accepted");
        await setShipmentPincodes(tx, accepted, false);
        if (fresh.length === 0) return { used, value: 0 };
        await addUsage(tx, accountId, period, dayOf(nowMs), fresh.length);
        await recordQuotaMarks(tx, accountId, period, { before: used, after: used + fresh.length, quota }, nowMs);
        return { used: used + fresh.length, value: fresh.length };
      })) as { used: number; value: number },
  );
}

/** Reference and metadata per accepted shipment; for one listed twice the later item wins (docs/shipments.md). */
function followDataOf(valid: readonly Valid[], results: readonly FollowResult[]): FollowDataItem[] {
  const byKey = new Map<string, FollowDataItem>();
  for (const v of valid) {
    if (results[v.index]?.result !== "accepted" || (v.reference === undefined && v.metadata === undefined)) continue;
    const k = `${v.courier}/${v.awb}`;
    const prev = byKey.get(k) ?? { courier: v.courier, awb: v.awb };
    byKey.set(k, {
      ...prev,
      ...(v.reference !== undefined ? { reference: v.reference } : {}),
      ...(v.metadata ? { metadata: v.metadata } : {}),
    });
  }
  return [...byKey.values()];
}
