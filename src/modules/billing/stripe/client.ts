/** The Stripe API client (the SDK's web build); `STRIPE_API_BASE` points it at a twin in tests. */
import { readFileSync } from "node:fs";
import Stripe from "stripe";
import type { BillingConfig } from "../../../config.ts";

export type StripeBillingConfig = Extract<BillingConfig, { provider: "stripe" }>;

/** Builds the SDK client. Reads `apiCaFile` once (throws if it cannot be read). */
export function createStripeClient(cfg: StripeBillingConfig): Stripe {
  const ca = cfg.apiCaFile ? readFileSync(cfg.apiCaFile, "utf8") : undefined;
  const base = cfg.apiBase;
  const fetchFn: typeof fetch | undefined = ca
    ? (((url: string | URL | Request, init?: RequestInit) => fetch(url, { ...init, tls: { ca } })) as typeof fetch)
    : undefined;
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
