/**
 * Usage & plan (docs/billing.md): plan changes through the billing provider; only the sandbox's `approved` changes
 * the plan here, others confirm elsewhere (admin CLI, Stripe's webhook).
 */
import { Elysia } from "elysia";
import { setPlan } from "../../accounts/service.ts";
import { quotaResetsAt, usedThisMonth } from "../../accounts/quota.ts";
import { isPlanId, planOf } from "../../../domain/plans.ts";
import { htmlResponse, pageSession, redirect, str, withForm, withSession, type RouteDeps } from "../http.ts";
import type { DashboardSession } from "../session.ts";
import type { UsageInfo } from "../views/account.ts";
import { billingPage, checkoutPage } from "../views/billing.ts";
import type { Flash } from "../views/layout.ts";

const DONE: Record<string, Flash> = {
  "plan-changed": {
    kind: "ok",
    text: "Your plan is changed. Your existing API keys use the new quota and rate limit at once.",
  },
  "plan-same": { kind: "ok", text: "That is already your plan." },
  "plan-requested": {
    kind: "ok",
    text: "Your request is recorded. Our team confirms it (and invoices you); the new plan then applies to your existing API keys at once.",
  },
  "plan-submitted": {
    kind: "ok",
    text: "Your change is sent to Stripe. An upgrade applies as soon as Stripe confirms the payment; a downgrade at the end of the paid period.",
  },
  "checkout-complete": {
    kind: "ok",
    text: "Thank you. Your plan changes as soon as Stripe confirms the payment to us, usually within seconds: reload this page.",
  },
  "checkout-cancelled": { kind: "ok", text: "Checkout was cancelled; nothing was charged and your plan is unchanged." },
};

/** Routes of the billing page. */
export function billingRoutes(rd: RouteDeps) {
  const { deps } = rd;
  const usage = async (s: DashboardSession): Promise<UsageInfo> => {
    const now = deps.clock.now();
    return {
      used: await usedThisMonth(deps.db, s.account.id, now),
      plan: planOf(s.account.plan),
      resetsAt: quotaResetsAt(now),
    };
  };
  const page = async (s: DashboardSession, flash: Flash | undefined, status = 200) =>
    htmlResponse(
      billingPage(pageSession(s), await usage(s), rd.billing, (await rd.billing.state?.(s.account.id)) ?? {}, flash),
      status,
    );

  return new Elysia()
    .get("/dashboard/billing", ({ request, cookie, query }) =>
      withSession(rd, { request, cookie }, (s) => page(s, query.done ? DONE[query.done] : undefined)),
    )
    .post("/dashboard/billing", ({ request, cookie, body }) =>
      withForm(rd, { request, cookie, body }, async (s, form) => {
        const to = str(form, "plan");
        if (!isPlanId(to) || (rd.billing.offers && !rd.billing.offers(to)))
          return page(s, { kind: "error", text: "Choose one of the plans below." }, 422);
        const from = planOf(s.account.plan).id;
        if (to === from) return redirect("/dashboard/billing?done=plan-same");
        const d = await rd.billing.requestPlanChange({ accountId: s.account.id, email: s.account.email, from, to });
        switch (d.status) {
          case "redirect":
            return htmlResponse(checkoutPage(pageSession(s), to, d.url));
          case "requested":
            deps.log.info("plan change requested", {
              account_id: s.account.id,
              from,
              to,
              upgrade_request_id: d.requestId,
            });
            return redirect("/dashboard/billing?done=plan-requested");
          case "submitted":
            return redirect("/dashboard/billing?done=plan-submitted");
          case "declined":
            return page(s, { kind: "error", text: `The plan change was declined: ${d.reason}` }, 402);
          case "approved":
            await setPlan(deps.db, s.account.id, to);
            deps.log.info("plan changed from the dashboard", {
              account_id: s.account.id,
              from,
              to,
              reference: d.reference,
            });
            return redirect("/dashboard/billing?done=plan-changed");
        }
      }),
    );
}
