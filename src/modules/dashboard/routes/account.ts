/** Overview and API keys (usage & plan: routes/billing.ts; shipments: routes/shipments.ts). */
import { Value } from "@sinclair/typebox/value";
import { eq, sql } from "drizzle-orm";
import { Elysia } from "elysia";
import { follows } from "../../../db/schema/index.ts";
import { createApiKey, listApiKeys, revokeApiKey } from "../../accounts/service.ts";
import { quotaResetsAt, usedThisMonth } from "../../accounts/quota.ts";
import { planOf } from "../../../domain/plans.ts";
import { listWebhooks } from "../../webhooks/service.ts";
import { isId } from "../../../lib/ids.ts";
import {
  htmlResponse,
  pageSession,
  redirect,
  str,
  unreadableFields,
  UNREADABLE_FIELD,
  withForm,
  withSession,
  type RouteDeps,
} from "../http.ts";
import { KeyNameForm } from "../model.ts";
import type { DashboardSession } from "../session.ts";
import { keysPage, messagePage, type UsageInfo } from "../views/account.ts";
import { overviewPage, SUCCESS_CHART_DAYS } from "../views/overview.ts";
import { deliveriesPerDay } from "../service.ts";
import { deliveryHealth, needsAction, projectedMonthEnd, shipmentsByState } from "../overview.ts";
import { usageByDay } from "../../accounts/quota-days.ts";
import type { Flash } from "../views/layout.ts";

const DONE: Record<string, Flash> = {
  revoked: { kind: "ok", text: "The key is revoked; requests using it now fail with 401." },
};

/** Routes for the account pages. */
export function accountRoutes(rd: RouteDeps) {
  const { deps } = rd;
  const flashOf = (q: Record<string, string | undefined>) => (q.done ? DONE[q.done] : undefined);

  return new Elysia()
    .get("/dashboard", ({ request, cookie, query }) =>
      withSession(rd, { request, cookie }, (s) => overviewResponse(rd, s, flashOf(query))),
    )
    .get("/dashboard/keys", ({ request, cookie, query }) =>
      withSession(rd, { request, cookie }, async (s) =>
        htmlResponse(
          keysPage(pageSession(s), await listApiKeys(deps.db, s.account.id, deps.services.keyUse), {
            flash: flashOf(query),
          }),
        ),
      ),
    )
    .post("/dashboard/keys", ({ request, cookie, body }) =>
      withForm(rd, { request, cookie, body }, async (s, form) => {
        const input = { name: str(form, "name").trim() };
        if (unreadableFields(form, ["name"]))
          return htmlResponse(
            keysPage(pageSession(s), await listApiKeys(deps.db, s.account.id, deps.services.keyUse), {
              nameError: UNREADABLE_FIELD,
            }),
            422,
          );
        if (!Value.Check(KeyNameForm, input))
          return htmlResponse(
            keysPage(pageSession(s), await listApiKeys(deps.db, s.account.id, deps.services.keyUse), {
              nameError: "Use at most 60 printable characters.",
            }),
            422,
          );
        const key = await createApiKey(deps.db, s.account.id, input.name || "default", { nowMs: deps.clock.now() });
        // Rendered in this response, never stored: the raw key is shown once.
        return htmlResponse(
          keysPage(pageSession(s), await listApiKeys(deps.db, s.account.id, deps.services.keyUse), {
            newKey: key.key,
            flash: { kind: "ok", text: "Key created." },
          }),
          201,
        );
      }),
    )
    .post("/dashboard/keys/:id/revoke", ({ request, cookie, body, params }) =>
      withForm(rd, { request, cookie, body }, async (s) => {
        if (!isId("key", params.id) || !(await revokeApiKey(deps.db, s.account.id, params.id)))
          return htmlResponse(messagePage("Not found", "No such active key on your account.", pageSession(s)), 404);
        return redirect("/dashboard/keys?done=revoked");
      }),
    );
}

/** The overview page: usage, delivery health, shipments by state and what needs the owner's action. */
async function overviewResponse(rd: RouteDeps, s: DashboardSession, flash: Flash | undefined): Promise<Response> {
  const { deps } = rd;
  const usage = async (): Promise<UsageInfo> => {
    const now = deps.clock.now();
    return {
      used: await usedThisMonth(deps.db, s.account.id, now),
      plan: planOf(s.account.plan),
      resetsAt: quotaResetsAt(now),
    };
  };
  const [u, keys, hooks, [n]] = await Promise.all([
    usage(),
    listApiKeys(deps.db, s.account.id, deps.services.keyUse),
    listWebhooks(deps.db, s.account.id),
    deps.db.select({ n: sql<number>`count(*)::int` }).from(follows).where(eq(follows.accountId, s.account.id)),
  ]);
  const counts = {
    keys: keys.filter((k) => !k.revokedAt).length,
    webhooks: hooks.length,
    deactivated: hooks.filter((w) => w.status === "deactivated").length,
    shipments: n?.n ?? 0,
  };
  const now = deps.clock.now();
  const [health, success, states, days, action] = await Promise.all([
    deliveryHealth(deps.db, s.account.id, now),
    deliveriesPerDay(deps.db, s.account.id, null, now, SUCCESS_CHART_DAYS),
    shipmentsByState(deps.db, s.account.id),
    usageByDay(deps.db, s.account.id, now),
    needsAction(deps.db, s.account.id),
  ]);
  const monthDays = new Date(quotaResetsAt(now).getTime() - 1).getUTCDate();
  const data = {
    usage: u,
    projected: projectedMonthEnd(u.used, now),
    health,
    success,
    states,
    counts,
    days,
    monthDays,
    action,
  };
  return htmlResponse(overviewPage(pageSession(s), data, flash));
}
