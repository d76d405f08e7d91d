/** The Stripe API client (the SDK's web build); `STRIPE_API_BASE` points it at a twin in tests. */
import { readFileSync } from "node:fs";
import Stripe from "stripe";
import type { BillingConfig } from "../../../config/index.ts";
import { offTheClock } from "../../../lib/deadline.ts";

export type StripeBillingConfig = Extract<BillingConfig, { provider: "stripe" }>;

/** Builds the SDK client. Reads `apiCaFile` once (throws if it cannot be read). */
export function createStripeClient(cfg: StripeBillingConfig): Stripe {
  const ca = cfg.apiCaFile ? readFileSync(cfg.apiCaFile, "utf8") : undefined;
  const base = cfg.apiBase;
  // Stripe's time (its own timeout and retries) spends no request's database deadline (src/lib/deadline.ts).
  const fetchFn = ((url: string | URL | Request, init?: RequestInit) =>
    offTheClock(() => fetch(url, ca ? { ...init, tls: { ca } } : init))) as typeof fetch;
  return new Stripe(cfg.secretKey, {
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false,
    httpClient: Stripe.createFetchHttpClient(fetchFn),
    ...(base
      ? {
          host: base.hostname,
          port: base.port || (base.protocol === "https:" ? 443 : 80),
          protocol: base.protocol === "https:" ? ("https" as const) : ("http" as const),
        }
      : {}),
  });
}
