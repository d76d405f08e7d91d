/** Usage & plan: the plan table with the provider's actions and pending changes (docs/billing.md). */
import { PLANS, planOf, type PlanId } from "../../../domain/plans.ts";
import type { BillingProvider, BillingState } from "../billing.ts";
import { fmtInt, fmtTime, html, type SafeHtml } from "../html.ts";
import { usageBlock, type UsageInfo } from "./account.ts";
import { csrfField, layout, type Flash, type PageSession } from "./layout.ts";

const PROVIDER_NAME = { sandbox: "Sandbox", manual: "Manual approval", stripe: "Stripe" } as const;

function statusLines(st: BillingState): SafeHtml {
  const out: SafeHtml[] = [];
  if (st.pendingRequest)
    out.push(
      html`<p class="warn" role="status" data-testid="pending-request">You asked to move to <strong>${planOf(st.pendingRequest.toPlan).name}</strong> on ${fmtTime(st.pendingRequest.createdAt)}. The request is waiting for approval by our team; your current plan stays until then.</p>`,
    );
  if (st.lastDecision?.status === "rejected")
    out.push(
      html`<p class="warn" data-testid="request-rejected">Your request to move to ${planOf(st.lastDecision.toPlan).name} was declined${st.lastDecision.note ? html`: ${st.lastDecision.note}` : ""}.</p>`,
    );
  if (st.scheduled)
    out.push(
      html`<p class="warn" role="status" data-testid="scheduled-change">Your plan changes to <strong>${planOf(st.scheduled.plan).name}</strong> on ${fmtTime(st.scheduled.at)}, at the end of the paid period.</p>`,
    );
  return html`${out}`;
}

function action(
  s: PageSession,
  provider: BillingProvider,
  p: PlanId,
  i: number,
  current: number,
  st: BillingState,
): SafeHtml {
  if (i === current) return html`<strong>Current plan</strong>`;
  if (provider.offers && !provider.offers(p)) return html`<span class="hint">Contact us</span>`;
  if (st.pendingRequest?.toPlan === p) return html`<strong>Requested</strong>`;
  const up = i > current;
  const verb = provider.kind === "manual" ? "Request" : up ? "Upgrade to" : "Downgrade to";
  return html`<form method="post" action="/dashboard/billing">${csrfField(s.csrfToken)}<input type="hidden" name="plan" value="${p}">
        <button type="submit" class="${up ? "primary" : "secondary"}" data-testid="plan-${p}">${verb} ${planOf(p).name}</button></form>`;
}

/** Usage and the plan table with upgrade / downgrade actions. */
export function billingPage(
  s: PageSession,
  u: UsageInfo,
  provider: BillingProvider,
  st: BillingState,
  flash?: Flash,
): SafeHtml {
  const current = PLANS.findIndex((p) => p.id === u.plan.id);
  return layout({
    title: "Usage & plan",
    session: s,
    active: "billing",
    flash,
    body: html`${usageBlock(u)}
<section class="card" aria-labelledby="plans-h">
  <h2 id="plans-h">Plans</h2>
  <p class="hint">${provider.kind ? html`<span class="badge" data-testid="billing-provider">${PROVIDER_NAME[provider.kind]}</span> ` : ""}${provider.label}.</p>
  ${statusLines(st)}
  <div class="scroll"><table class="plans">
  <thead><tr><th scope="col">Plan</th><th scope="col">Requests / month</th><th scope="col">Rate limit / min</th><th scope="col">Live webhooks</th><th scope="col">Price (INR / month)</th><th scope="col"><span class="sr-only">Action</span></th></tr></thead>
  <tbody>${PLANS.map(
    (p, i) => html`<tr${i === current ? html` class="current"` : ""}>
    <th scope="row">${p.name}</th><td data-label="Requests / month">${fmtInt(p.monthly_quota)}</td><td data-label="Rate limit / min">${fmtInt(p.rate_limit_per_minute)}</td><td data-label="Live webhooks">${p.live_webhooks ? "yes" : "no"}</td><td data-label="Price (INR / month)">${p.price_inr_per_month === 0 ? "free" : fmtInt(p.price_inr_per_month)}</td>
    <td>${action(s, provider, p.id, i, current, st)}</td></tr>`,
  )}</tbody>
  </table></div>
</section>`,
  });
}

/** A link to Stripe Checkout: CSP `form-action 'self'` would block a redirect from the form POST. */
export function checkoutPage(s: PageSession, plan: PlanId, url: string): SafeHtml {
  return layout({
    title: "Continue to payment",
    session: s,
    active: "billing",
    body: html`<section class="card" aria-labelledby="pay-h">
  <h2 id="pay-h">Pay for ${planOf(plan).name} with Stripe</h2>
  <p>Payment happens on Stripe's secure checkout page. Your plan changes as soon as Stripe confirms the payment to us.</p>
  <p><a class="button primary" href="${url}" data-testid="checkout-link" rel="noreferrer">Continue to Stripe Checkout</a> <a href="/dashboard/billing">Cancel</a></p>
</section>`,
  });
}
