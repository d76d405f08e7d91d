/** Billing, password-hash and alert-mail variables of config-env.ts's schema. */
import { Type as T } from "@sinclair/typebox";
import { File, Int, OneOf, Text } from "./env-kinds.ts";

/** Default memory of each argon2id password hash, KiB: `Bun.password`'s own argon2id default (64 MiB). */
export const DEFAULT_PASSWORD_HASH_MEMORY_KIB = 65_536;
/** Least memory of an argon2id password hash, KiB: OWASP Password Storage Cheat Sheet's smallest argon2id memory (19 MiB, t = 2, p = 1). */
export const MIN_PASSWORD_HASH_MEMORY_KIB = 19_456;

const StripePrice = (description: string) =>
  T.Optional(
    Text({
      pattern: "^price_[A-Za-z0-9_]+$",
      "x-expected": "a Stripe Price id (price_ and letters, digits or _)",
      description,
    }),
  );

export const ACCOUNT_ENV = {
  BILLING_PROVIDER: T.Optional(
    OneOf(["sandbox", "manual", "stripe"], {
      "x-default": "`sandbox` with sandbox couriers and no `DATABASE_URL`, else `manual`",
      description:
        "Who confirms plan changes: `sandbox` (at once; refused with live couriers), `manual` (an operator approves with the admin CLI) or `stripe` (docs/billing.md).",
    }),
  ),
  STRIPE_SECRET_KEY: T.Optional(
    Text({
      pattern: "^(sk|rk)_[A-Za-z0-9_]+$",
      "x-expected": "a Stripe API key (sk_ or rk_ and letters, digits or _)",
      description: "With `BILLING_PROVIDER=stripe`: the Stripe API key (`sk_…` or a restricted `rk_…`).",
    }),
  ),
  STRIPE_WEBHOOK_SECRET: T.Optional(
    Text({
      pattern: "^whsec_[A-Za-z0-9+/=_-]+$",
      "x-expected": "a Stripe webhook signing secret (whsec_ and base64 characters)",
      description: "With `BILLING_PROVIDER=stripe`: the signing secret of the Stripe webhook endpoint (`whsec_…`).",
    }),
  ),
  STRIPE_PRICE_STARTER: StripePrice(
    "Stripe Price id (`price_…`) of the starter plan; a plan without a price cannot be bought.",
  ),
  STRIPE_PRICE_PRO: StripePrice("Stripe Price id of the pro plan."),
  STRIPE_PRICE_GROWTH: StripePrice("Stripe Price id of the growth plan."),
  STRIPE_PRICE_BUSINESS: StripePrice("Stripe Price id of the business plan."),
  STRIPE_API_BASE: T.Optional(
    Text({
      pattern: "^https?://[^\\s/]+/?$",
      "x-expected": "an http:// or https:// origin without a path",
      "x-default": "unset (api.stripe.com)",
      description: "Tests only: another Stripe API origin (a loopback twin).",
    }),
  ),
  STRIPE_API_CA_FILE: File("Tests only: PEM CA of `STRIPE_API_BASE`'s certificate."),
  PASSWORD_HASH_MEMORY_KIB: Int({
    default: DEFAULT_PASSWORD_HASH_MEMORY_KIB,
    minimum: MIN_PASSWORD_HASH_MEMORY_KIB,
    maximum: 4_194_304,
    description:
      "Memory of each argon2id password hash (dashboard sign-up, password change and reset, `admin create-account --password`), KiB; time cost 2, one lane. The least is OWASP's smallest argon2id setting (19 MiB). A stored hash keeps the parameters it was made with: a change applies to passwords set afterwards. Each sign-in verification holds this much memory while it runs (at most 4 at once).",
  }),
  SMTP_URL: T.Optional(
    Text({
      pattern: "^smtps?://[^\\s]+$",
      "x-expected": "an smtp:// or smtps:// URL without spaces",
      "x-default": "unset (alerts are shown in the dashboard only)",
      description:
        "Mail server for owner alerts (docs/alerts.md): `smtps://user:pass@host:465` (TLS from the start) or `smtp://user:pass@host:587` (STARTTLS when offered). Percent-encode special characters in the user name and password.",
    }),
  ),
  ALERT_FROM: T.Optional(
    Text({
      minLength: 3,
      "x-default": "`Courier Tracking <alerts@HOST>`, HOST being `PUBLIC_BASE_URL`'s host name",
      description: "Sender (`From`) of alert emails, an address or `Name <address>`.",
    }),
  ),
  SMTP_CA_FILE: File("Extra PEM CA trusted for `SMTP_URL`'s certificate (a private mail relay)."),
};
