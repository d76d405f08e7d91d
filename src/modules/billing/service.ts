/**
 * The billing provider chosen by `BILLING_PROVIDER` (src/config.ts,
 * docs/billing.md), built once per set of app dependencies so the dashboard
 * and the Stripe webhook route share one Stripe client.
 */
import type { Config } from "../../config.ts";
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

/**
 * The configured provider. `sandbox` is refused with live couriers (again
 * here, beside the config check, since it gives paid plans away).
 * @throws Error for `sandbox` with `courierMode: live`.
 */
export function billingFor(deps: BillingDeps): Billing {
  const cached = built.get(deps);
  if (cached) return cached;
  const cfg = deps.config.billing;
  let b: Billing;
  if (cfg.provider === "stripe") {
    // Loaded only here: the SDK is ~220 modules and 2–3 MiB of resident memory that every process without
    // Stripe would carry (docs/performance.md, "Lazy loading"). Bun's `require` loads an ES module synchronously.
    const { createStripeClient } = require("./stripe/client.ts") as typeof import("./stripe/client.ts");
    const stripe = createStripeClient(cfg);
    const log = deps.log.child({ component: "billing" });
    b = {
      provider: stripeBilling({ db: deps.db, log, cfg, stripe, publicBaseUrl: deps.config.publicBaseUrl }),
      stripeWebhook: stripeWebhookHandler({ db: deps.db, clock: deps.clock, log, cfg, stripe }),
    };
  } else if (cfg.provider === "manual") b = { provider: manualBilling(deps.db) };
  else {
    if (deps.config.courierMode !== "sandbox") throw new Error("the sandbox billing provider is allowed only with sandbox couriers");
    b = { provider: sandboxBilling };
  }
  built.set(deps, b);
  return b;
}
