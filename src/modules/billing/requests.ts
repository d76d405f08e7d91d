/** Plan-change requests of the `manual` provider (docs/billing.md). */
import { and, desc, eq, inArray } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import { accounts, upgradeRequests } from "../../db/schema/index.ts";
import { newId } from "../../lib/ids.ts";
import { setPlan } from "../accounts/service.ts";
import { isPlanId, type PlanId } from "../../domain/plans.ts";
import type { BillingProvider, BillingState } from "./provider.ts";
import { defined } from "../../lib/defined.ts";

export type UpgradeRequest = typeof upgradeRequests.$inferSelect;
export type RequestStatus = "pending" | "approved" | "rejected" | "superseded";

/** Thrown for an unknown request id or one that is no longer pending. */
export class RequestNotPending extends Error {}

/** Records a request to move `accountId` from `from` to `to`, superseding a pending one in the same transaction. */
export async function recordRequest(db: Db, accountId: string, from: PlanId, to: PlanId): Promise<UpgradeRequest> {
  return db.transaction(async (tx) => {
    await tx
      .update(upgradeRequests)
      .set({ status: "superseded", decidedAt: new Date() })
      .where(and(eq(upgradeRequests.accountId, accountId), eq(upgradeRequests.status, "pending")));
    const [row] = await tx
      .insert(upgradeRequests)
      .values({ id: newId("upg"), accountId, fromPlan: from, toPlan: to })
      .returning();
    return defined(row, "the inserted upgrade request");
  });
}

/** Requests with their account's email, oldest first; `status` undefined = every status. */
export async function listRequests(db: DbOrTx, status: RequestStatus | undefined, limit = 200) {
  return db
    .select({ request: upgradeRequests, email: accounts.email, currentPlan: accounts.plan })
    .from(upgradeRequests)
    .innerJoin(accounts, eq(accounts.id, upgradeRequests.accountId))
    .where(status ? eq(upgradeRequests.status, status) : undefined)
    .orderBy(upgradeRequests.createdAt)
    .limit(limit);
}

/** Approves a pending request and sets the plan. @throws RequestNotPending when unknown or decided */
export async function approveRequest(db: Db, id: string, note?: string): Promise<UpgradeRequest> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(upgradeRequests)
      .set({ status: "approved", decidedAt: new Date(), note: note ?? null })
      .where(and(eq(upgradeRequests.id, id), eq(upgradeRequests.status, "pending")))
      .returning();
    if (!row || !isPlanId(row.toPlan)) throw new RequestNotPending(`no pending request ${JSON.stringify(id)}`);
    await setPlan(tx, row.accountId, row.toPlan);
    return row;
  });
}

/** Rejects a pending request (`note` shown to the customer). @throws RequestNotPending likewise */
export async function rejectRequest(db: DbOrTx, id: string, note?: string): Promise<UpgradeRequest> {
  const [row] = await db
    .update(upgradeRequests)
    .set({ status: "rejected", decidedAt: new Date(), note: note ?? null })
    .where(and(eq(upgradeRequests.id, id), eq(upgradeRequests.status, "pending")))
    .returning();
  if (!row) throw new RequestNotPending(`no pending request ${JSON.stringify(id)}`);
  return row;
}

/** After an operator's `set-plan`: a pending request for that plan is marked approved; one for another plan stays. */
export async function settleRequestsFor(db: DbOrTx, accountId: string, plan: PlanId): Promise<void> {
  await db
    .update(upgradeRequests)
    .set({ status: "approved", decidedAt: new Date(), note: "plan set by an operator" })
    .where(
      and(
        eq(upgradeRequests.accountId, accountId),
        eq(upgradeRequests.status, "pending"),
        eq(upgradeRequests.toPlan, plan),
      ),
    );
}

/** The account's newest request that was not superseded: pending, or how it was decided (the billing page's status line). */
export async function requestStateOf(db: DbOrTx, accountId: string): Promise<BillingState> {
  const [r] = await db
    .select()
    .from(upgradeRequests)
    .where(
      and(
        eq(upgradeRequests.accountId, accountId),
        inArray(upgradeRequests.status, ["pending", "approved", "rejected"]),
      ),
    )
    .orderBy(desc(upgradeRequests.createdAt))
    .limit(1);
  if (!r || !isPlanId(r.toPlan)) return {};
  if (r.status === "pending") return { pendingRequest: { id: r.id, toPlan: r.toPlan, createdAt: r.createdAt } };
  if ((r.status === "approved" || r.status === "rejected") && r.decidedAt)
    return { lastDecision: { id: r.id, toPlan: r.toPlan, status: r.status, note: r.note, decidedAt: r.decidedAt } };
  return {};
}

/** The `manual` provider: every change is a request an operator decides with the admin CLI. */
export function manualBilling(db: Db): BillingProvider {
  return {
    kind: "manual",
    label:
      "Plan changes are confirmed by our team: your request is recorded here and the new plan applies once it is approved (we invoice you)",
    async requestPlanChange(req) {
      const r = await recordRequest(db, req.accountId, req.from, req.to);
      return { status: "requested", requestId: r.id };
    },
    state: (accountId) => requestStateOf(db, accountId),
  };
}
