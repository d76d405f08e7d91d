/** The billing provider chosen by `BILLING_PROVIDER`, built once so the dashboard and the Stripe webhook share a client. */
import type { Config } from "../../config/index.ts";
import type { Db } from "../../db/client.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/log.ts";
import { sandboxBilling, type BillingProvider } from "./provider.ts";
import { manualBilling } from "./requests.ts";
import { stripeBilling } from "./stripe/provider.ts";
import { stripeWebhookHandler } from "./stripe/webhook.ts";

export interface BillingDeps {
  config: Config;
  db: Db;
  clock: Clock;
  log: Logger;
}

export interface Billing {
  provider: BillingProvider;
  /** The Stripe webhook handler; only with `BILLING_PROVIDER=stripe`. */
  stripeWebhook?: (request: Request) => Promise<Response>;
}

const built = new WeakMap<object, Billing>();

/** The configured provider. @throws Error for `sandbox` with live couriers (it gives paid plans away) */
export function billingFor(deps: BillingDeps): Billing {
  const cached = built.get(deps);
  if (cached) return cached;
  const cfg = deps.config.billing;
  let b: Billing;
  if (cfg.provider === "stripe") {
    // Loaded only here (docs/performance.md, "Lazy loading"); Bun's `require` loads an ES module synchronously.
    const { createStripeClient }: typeof import("./stripe/client.ts") = require("./stripe/client.ts");
    const stripe = createStripeClient(cfg);
    const log = deps.log.child({ component: "billing" });
    b = {
      provider: stripeBilling({ db: deps.db, log, cfg, stripe, publicBaseUrl: deps.config.publicBaseUrl }),
      stripeWebhook: stripeWebhookHandler({ db: deps.db, clock: deps.clock, log, cfg, stripe }),
    };
  } else if (cfg.provider === "manual") b = { provider: manualBilling(deps.db) };
  else {
    if (deps.config.courierMode !== "sandbox")
      throw new Error("the sandbox billing provider is allowed only with sandbox couriers");
    b = { provider: sandboxBilling };
  }
  built.set(deps, b);
  return b;
}
