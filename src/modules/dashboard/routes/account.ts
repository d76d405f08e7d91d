/** Overview, API keys, usage & plan (billing) and tracked shipments. */
import { Value } from "@sinclair/typebox/value";
import { eq, sql } from "drizzle-orm";
import { Elysia } from "elysia";
import { follows } from "../../../db/schema/index.ts";
import { createApiKey, listApiKeys, revokeApiKey, setPlan } from "../../accounts/service.ts";
import { quotaResetsAt, usedThisMonth } from "../../accounts/quota.ts";
import { isPlanId, planOf } from "../../billing/plans.ts";
import { listWebhooks } from "../../webhooks/service.ts";
import { htmlResponse, pageSession, redirect, str, withForm, withSession, type FormBody, type RouteDeps } from "../http.ts";
import { KeyNameForm } from "../model.ts";
import { listFollowedShipments } from "../service.ts";
import type { DashboardSession } from "../session.ts";
import { billingPage, keysPage, messagePage, overviewPage, shipmentsPage, type UsageInfo } from "../views/account.ts";
import type { Flash } from "../views/layout.ts";

const DONE: Record<string, Flash> = {
  revoked: { kind: "ok", text: "The key is revoked; requests using it now fail with 401." },
  "plan-changed": { kind: "ok", text: "Your plan is changed. Your existing API keys use the new quota and rate limit at once." },
  "plan-same": { kind: "ok", text: "That is already your plan." },
};

/** Routes for the account pages. */
export function accountRoutes(rd: RouteDeps) {
  const { deps } = rd;
  const usage = async (s: DashboardSession): Promise<UsageInfo> => {
    const now = deps.clock.now();
    return { used: await usedThisMonth(deps.db, s.account.id, now), plan: planOf(s.account.plan), resetsAt: quotaResetsAt(now) };
  };
  const flashOf = (q: Record<string, string | undefined>) => (q.done ? DONE[q.done] : undefined);

  return new Elysia()
    .get("/dashboard", ({ request, query }) =>
      withSession(rd, request, async (s) => {
        const [u, keys, hooks, [n]] = await Promise.all([
          usage(s),
          listApiKeys(deps.db, s.account.id),
          listWebhooks(deps.db, s.account.id),
          deps.db.select({ n: sql<number>`count(*)::int` }).from(follows).where(eq(follows.accountId, s.account.id)),
        ]);
        const counts = { keys: keys.filter((k) => !k.revokedAt).length, webhooks: hooks.length, deactivated: hooks.filter((w) => w.status === "deactivated").length, shipments: n?.n ?? 0 };
        return htmlResponse(overviewPage(pageSession(s), u, counts, flashOf(query)));
      }),
    )
    .get("/dashboard/keys", ({ request, query }) =>
      withSession(rd, request, async (s) => htmlResponse(keysPage(pageSession(s), await listApiKeys(deps.db, s.account.id), { flash: flashOf(query) }))),
    )
    .post("/dashboard/keys", ({ request, body }) =>
      withForm(rd, request, body as FormBody, async (s, form) => {
        const input = { name: str(form, "name").trim() };
        if (!Value.Check(KeyNameForm, input))
          return htmlResponse(keysPage(pageSession(s), await listApiKeys(deps.db, s.account.id), { nameError: "Use at most 60 printable characters." }), 422);
        const key = await createApiKey(deps.db, s.account.id, input.name || "default");
        // Rendered in this response, never stored: the raw key is shown once.
        return htmlResponse(keysPage(pageSession(s), await listApiKeys(deps.db, s.account.id), { newKey: key.key, flash: { kind: "ok", text: "Key created." } }), 201);
      }),
    )
    .post("/dashboard/keys/:id/revoke", ({ request, body, params }) =>
      withForm(rd, request, body as FormBody, async (s) => {
        // Scoped to the signed-in account: another account's key id is "not found".
        if (!(await revokeApiKey(deps.db, s.account.id, params.id))) return htmlResponse(messagePage("Not found", "No such active key on your account.", pageSession(s)), 404);
        return redirect("/dashboard/keys?done=revoked");
      }),
    )
    .get("/dashboard/billing", ({ request, query }) =>
      withSession(rd, request, async (s) => htmlResponse(billingPage(pageSession(s), await usage(s), rd.billing.label, flashOf(query)))),
    )
    .post("/dashboard/billing", ({ request, body }) =>
      withForm(rd, request, body as FormBody, async (s, form) => {
        const to = str(form, "plan");
        if (!isPlanId(to)) return htmlResponse(billingPage(pageSession(s), await usage(s), rd.billing.label, { kind: "error", text: "Choose one of the plans below." }), 422);
        const from = planOf(s.account.plan).id;
        if (to === from) return redirect("/dashboard/billing?done=plan-same");
        const d = await rd.billing.requestPlanChange({ accountId: s.account.id, email: s.account.email, from, to });
        if (d.status === "redirect") return redirect(d.url);
        if (d.status === "declined") return htmlResponse(billingPage(pageSession(s), await usage(s), rd.billing.label, { kind: "error", text: `The plan change was declined: ${d.reason}` }), 402);
        await setPlan(deps.db, s.account.id, to);
        deps.log.info("plan changed from the dashboard", { account_id: s.account.id, from, to, reference: d.reference });
        return redirect("/dashboard/billing?done=plan-changed");
      }),
    )
    .get("/dashboard/shipments", ({ request }) =>
      withSession(rd, request, async (s) => htmlResponse(shipmentsPage(pageSession(s), await listFollowedShipments(deps.db, s.account.id)))),
    );
}

