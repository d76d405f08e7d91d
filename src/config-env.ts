/**
 * The environment the service reads: one TypeBox schema of the raw variables
 * (text, exactly as operators set them) and {@link ENV_DOCS}, what each one
 * means and its default, applied to the schema as `description` /
 * `x-default` and rendered into docs/deployment.md by `bun run docs:env`
 * (test/ops/deploy.test.ts keeps both in step). Parsing into a `Config` is
 * config.ts's.
 */
import { Type as T, type Static } from "@sinclair/typebox";

/** Receivers are expected to answer within 5 seconds (spec: Events, Delivery rules 6). */
export const SPEC_WEBHOOK_TIMEOUT_MS = 5_000;
/** "Re-check frequency: most couriers 3 per day" (spec: Limits): one re-check every 8 hours. */
export const SPEC_RECHECK_INTERVAL_SECONDS = 86_400 / 3;
/** Asynchronous couriers "can take 10 to 30 seconds" (spec: Limits): the lookup budget is the upper end. */
export const SPEC_ASYNC_BUDGET_MS = 30_000;

const Bool = T.Union([T.Literal("true"), T.Literal("false"), T.Literal("1"), T.Literal("0")]);
/**
 * `x-expected`: what a value must look like, in an operator's words. A configuration error quotes it
 * instead of the value (config.ts): values may be secrets, and an error line ends up in log stores.
 */
const PositiveInt = T.String({ pattern: "^[0-9]+$", "x-expected": "a whole number (digits 0-9 only)" });
const StripePrice = T.String({ pattern: "^price_[A-Za-z0-9_]+$", "x-expected": "a Stripe Price id (price_ and letters, digits or _)" });
const SecretsKeyText = T.String({ pattern: "^[A-Za-z0-9+/=_-]{43,88}$", "x-expected": "32 bytes in base64 or base64url (43 to 88 characters of A-Z a-z 0-9 + / = _ -)" });

/** Default memory of each argon2id password hash, KiB: `Bun.password`'s own argon2id default (64 MiB). */
export const DEFAULT_PASSWORD_HASH_MEMORY_KIB = 65_536;
/** Least memory of an argon2id password hash, KiB: OWASP Password Storage Cheat Sheet's smallest argon2id memory (19 MiB, with t = 2, p = 1). */
export const MIN_PASSWORD_HASH_MEMORY_KIB = 19_456;

/** Time a client has to send a whole request body, ms (10 s: a 64 KiB body at 52 kbit/s, a slow mobile link). */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

/** Seconds before retries 1..5 (spec: Delivery rules 2: 1 min, 5 min, 30 min, 2 h, 24 h). */
export const RETRY_SCHEDULE_SECONDS = [60, 300, 1800, 7200, 86_400] as const;

/** Raw environment as text, exactly as operators set it. */
export const EnvSchema = T.Object({
  DATABASE_URL: T.Optional(T.String({ pattern: "^postgres(ql)?://", "x-expected": "a URL starting with postgres:// or postgresql://" })),
  DATA_DIR: T.Optional(T.String({ minLength: 1 })),
  PORT: T.Optional(PositiveInt),
  HOST: T.Optional(T.String({ minLength: 1 })),
  TLS_CERT_FILE: T.Optional(T.String({ minLength: 1 })),
  TLS_KEY_FILE: T.Optional(T.String({ minLength: 1 })),
  TRUST_PROXY: T.Optional(PositiveInt),
  PUBLIC_BASE_URL: T.Optional(T.String({ pattern: "^https?://[^\\s]+$", "x-expected": "an http:// or https:// URL without spaces" })),
  SECRETS_KEY: T.Optional(SecretsKeyText),
  COURIER_MODE: T.Optional(T.Union([T.Literal("sandbox"), T.Literal("live")])),
  SANDBOX_STEP_SECONDS: T.Optional(PositiveInt),
  SANDBOX_ASYNC_SECONDS: T.Optional(PositiveInt),
  SANDBOX_PORT: T.Optional(PositiveInt),
  COURIER_TIMEOUT_MS: T.Optional(PositiveInt),
  COURIER_ASYNC_BUDGET_MS: T.Optional(PositiveInt),
  COURIER_CONCURRENCY: T.Optional(PositiveInt),
  COURIER_QUEUE_LIMIT: T.Optional(PositiveInt),
  RECHECK_INTERVAL_SECONDS: T.Optional(PositiveInt),
  TERMINAL_REUSE_SECONDS: T.Optional(PositiveInt),
  WEBHOOK_RETRY_SCHEDULE: T.Optional(T.String({ pattern: "^[0-9]+(,[0-9]+){4}$", "x-expected": "five whole numbers of seconds separated by commas" })),
  WEBHOOK_TIMEOUT_MS: T.Optional(PositiveInt),
  WEBHOOK_ALLOW_PRIVATE_CIDRS: T.Optional(T.String()),
  WEBHOOK_CA_FILE: T.Optional(T.String({ minLength: 1 })),
  WEBHOOK_POLL_SECONDS: T.Optional(PositiveInt),
  RECHECK_POLL_SECONDS: T.Optional(PositiveInt),
  LEASE_SLACK_SECONDS: T.Optional(PositiveInt),
  TEST_WEBHOOKS_ENABLED: T.Optional(Bool),
  RETENTION_DAYS: T.Optional(PositiveInt),
  ROLE: T.Optional(T.Union([T.Literal("api"), T.Literal("worker"), T.Literal("all")])),
  LOG_LEVEL: T.Optional(T.Union([T.Literal("debug"), T.Literal("info"), T.Literal("warn"), T.Literal("error"), T.Literal("silent")])),
  BILLING_PROVIDER: T.Optional(T.Union([T.Literal("sandbox"), T.Literal("manual"), T.Literal("stripe")])),
  STRIPE_SECRET_KEY: T.Optional(T.String({ pattern: "^(sk|rk)_[A-Za-z0-9_]+$", "x-expected": "a Stripe API key (sk_ or rk_ and letters, digits or _)" })),
  STRIPE_WEBHOOK_SECRET: T.Optional(T.String({ pattern: "^whsec_[A-Za-z0-9+/=_-]+$", "x-expected": "a Stripe webhook signing secret (whsec_ and base64 characters)" })),
  STRIPE_PRICE_STARTER: T.Optional(StripePrice),
  STRIPE_PRICE_PRO: T.Optional(StripePrice),
  STRIPE_PRICE_GROWTH: T.Optional(StripePrice),
  STRIPE_PRICE_BUSINESS: T.Optional(StripePrice),
  STRIPE_API_BASE: T.Optional(T.String({ pattern: "^https?://[^\\s/]+/?$", "x-expected": "an http:// or https:// origin without a path" })),
  STRIPE_API_CA_FILE: T.Optional(T.String({ minLength: 1 })),
  // Operations: probes and metrics port, key checks, shutdown and start-up budgets (docs/deployment.md).
  ADMIN_PORT: T.Optional(PositiveInt),
  ADMIN_HOST: T.Optional(T.String({ minLength: 1 })),
  METRICS_TOKEN: T.Optional(T.String({ minLength: 16 })),
  SECRETS_KEY_PREVIOUS: T.Optional(SecretsKeyText),
  SECRETS_KEY_GENERATE: T.Optional(T.Literal("single-node")),
  SHUTDOWN_GRACE_SECONDS: T.Optional(PositiveInt),
  DB_CONNECT_TIMEOUT_SECONDS: T.Optional(PositiveInt),
  PASSWORD_HASH_MEMORY_KIB: T.Optional(PositiveInt),
  BODY_TIMEOUT_MS: T.Optional(PositiveInt),
});
export type Env = Static<typeof EnvSchema>;

/**
 * What each variable means and its default, as an operator reads it. Applied
 * to the schema below as `description` / `x-default`, and rendered into
 * docs/deployment.md by `bun run docs:env` (a test keeps both in step).
 * Every schema variable needs an entry here.
 */
export const ENV_DOCS: Record<keyof Env, { default: string; description: string }> = {
  DATABASE_URL: { default: "unset: embedded PostgreSQL under `DATA_DIR`", description: "PostgreSQL connection string (`postgres://user:pass@host:5432/db`). Set it for any deployment of more than one process." },
  DATA_DIR: { default: "`./data`", description: "Embedded database, generated self-signed certificate and generated secrets key." },
  PORT: { default: "`8443`", description: "Public port (HTTPS, or plain HTTP behind a TLS proxy with `TRUST_PROXY`)." },
  HOST: { default: "`127.0.0.1` embedded, `0.0.0.0` with `DATABASE_URL` (the image sets `0.0.0.0`)", description: "Address the public port binds to." },
  TLS_CERT_FILE: { default: "unset", description: "PEM certificate to serve TLS with (with `TLS_KEY_FILE`); else a self-signed one is generated into `DATA_DIR`." },
  TLS_KEY_FILE: { default: "unset", description: "PEM private key for `TLS_CERT_FILE`." },
  TRUST_PROXY: { default: "unset", description: "Number of proxies in front that set `X-Forwarded-For`. The service then serves plain HTTP and answers 400 `HTTPS_REQUIRED` unless `X-Forwarded-Proto` is `https` (probes excepted)." },
  PUBLIC_BASE_URL: { default: "`https://localhost:PORT`", description: "The URL clients use; appears in links, the OpenAPI servers list and the Postman collection." },
  SECRETS_KEY: { default: "generated into `DATA_DIR/secrets.key` (embedded database only)", description: "32 bytes, base64 or base64url, that encrypt webhook signing secrets. Every process on one database must share it; the database stores a check value and a process with another key refuses to start." },
  COURIER_MODE: { default: "`live` with `DATABASE_URL` or courier credentials, else `sandbox`", description: "`sandbox`: couriers without credentials answer from the built-in simulator and a development account is created. `live`: couriers without credentials are unavailable." },
  SANDBOX_STEP_SECONDS: { default: "`3600`", description: "Simulator: seconds between the scripted status steps of a sandbox shipment." },
  SANDBOX_ASYNC_SECONDS: { default: "`12`", description: "Simulator: seconds the asynchronous (aggregator) path takes to answer." },
  SANDBOX_PORT: { default: "any free port", description: "Simulator: loopback port." },
  COURIER_TIMEOUT_MS: { default: "`10000`", description: "Timeout of one synchronous courier request, ms." },
  COURIER_ASYNC_BUDGET_MS: { default: `\`${SPEC_ASYNC_BUDGET_MS}\``, description: "Total budget of an asynchronous (register and poll) courier lookup, ms." },
  COURIER_CONCURRENCY: { default: "`32`", description: "Courier calls in flight per courier and process; further calls queue." },
  COURIER_QUEUE_LIMIT: { default: "4 × `COURIER_CONCURRENCY`", description: "Lookups waiting per courier and process beyond those in flight. Past it, or when a lookup could not start within its budget, the answer is 503 `COURIER_BUSY` with `Retry-After` at once." },
  RECHECK_INTERVAL_SECONDS: { default: `\`${SPEC_RECHECK_INTERVAL_SECONDS}\``, description: "Interval between re-checks of a followed shipment (± 10 % jitter). Set it the same on every process: API processes schedule the first re-check." },
  TERMINAL_REUSE_SECONDS: { default: "`300`", description: "A delivered, returned or cancelled shipment that this process fetched from the courier less than this many seconds ago is answered from that fetch, without calling the courier again (`FetchTime` \"0.000\"); `0` calls the courier on every lookup (docs/shipments.md, Lookups of finished shipments)." },
  WEBHOOK_RETRY_SCHEDULE: { default: `\`${RETRY_SCHEDULE_SECONDS.join(",")}\``, description: "Seconds before delivery retries 1 to 5." },
  WEBHOOK_TIMEOUT_MS: { default: `\`${SPEC_WEBHOOK_TIMEOUT_MS}\``, description: "Timeout of one webhook delivery attempt (per redirect hop), ms." },
  WEBHOOK_ALLOW_PRIVATE_CIDRS: { default: "empty", description: "Comma-separated private ranges webhooks may reach (tests and private networks; logged as a warning). Set it the same on every process: API processes check addresses when webhooks are created." },
  WEBHOOK_CA_FILE: { default: "unset", description: "Extra PEM CA trusted for webhook receivers." },
  WEBHOOK_POLL_SECONDS: { default: "`1`", description: "Seconds between the delivery worker's backstop polls for retries coming due and missed notifications (a NOTIFY wakes it at once)." },
  RECHECK_POLL_SECONDS: { default: "`5`", description: "Seconds between drains of the shipments due for a re-check." },
  LEASE_SLACK_SECONDS: { default: "`30`", description: "How long a delivery or re-check claim outlives the longest its work may take; a killed process's claims are taken over after it." },
  TEST_WEBHOOKS_ENABLED: { default: "`true`", description: "Kill-switch for test fires (`false` answers 503 `TEST_WEBHOOKS_DISABLED`)." },
  RETENTION_DAYS: { default: "`30`", description: "Age after which delivered outbox rows, attempt logs and old events are pruned." },
  ROLE: { default: "`all`", description: "`api` serves HTTP only; `worker` runs re-checks and webhook deliveries only (no public port); `all` both." },
  LOG_LEVEL: { default: "`info`", description: "`debug`, `info`, `warn`, `error` or `silent`. JSON lines on stdout, one access-log line per request at `info`." },
  ADMIN_PORT: { default: "unset (no internal port)", description: "Internal plain-HTTP port serving `/healthz`, `/readyz` and `/metrics` without a key, in every role (a worker's only port). Keep it off the internet." },
  ADMIN_HOST: { default: "`127.0.0.1`", description: "Address the internal port binds to (`0.0.0.0` in a pod, so the kubelet and Prometheus reach it)." },
  METRICS_TOKEN: { default: "unset (`/metrics` not served on the public port)", description: "At least 16 characters; `/metrics` on the public port answers only `Authorization: Bearer <token>`." },
  SECRETS_KEY_PREVIOUS: { default: "unset", description: "The key before `SECRETS_KEY`, accepted for decryption only while rotating (see Rotating SECRETS_KEY)." },
  SECRETS_KEY_GENERATE: { default: "unset", description: "`single-node` allows a key generated into `DATA_DIR` with `DATABASE_URL` set (one process only); without it a deployment must set `SECRETS_KEY`." },
  SHUTDOWN_GRACE_SECONDS: { default: "`30`", description: "On SIGTERM: how long in-flight requests, re-checks and deliveries may take to finish before the process stops anyway." },
  BILLING_PROVIDER: { default: "`sandbox` with sandbox couriers and no `DATABASE_URL`, else `manual`", description: "Who confirms plan changes: `sandbox` (at once; refused with live couriers), `manual` (an operator approves with the admin CLI) or `stripe` (docs/billing.md)." },
  STRIPE_SECRET_KEY: { default: "unset", description: "With `BILLING_PROVIDER=stripe`: the Stripe API key (`sk_…` or a restricted `rk_…`)." },
  STRIPE_WEBHOOK_SECRET: { default: "unset", description: "With `BILLING_PROVIDER=stripe`: the signing secret of the Stripe webhook endpoint (`whsec_…`)." },
  STRIPE_PRICE_STARTER: { default: "unset", description: "Stripe Price id (`price_…`) of the starter plan; a plan without a price cannot be bought." },
  STRIPE_PRICE_PRO: { default: "unset", description: "Stripe Price id of the pro plan." },
  STRIPE_PRICE_GROWTH: { default: "unset", description: "Stripe Price id of the growth plan." },
  STRIPE_PRICE_BUSINESS: { default: "unset", description: "Stripe Price id of the business plan." },
  STRIPE_API_BASE: { default: "unset (api.stripe.com)", description: "Tests only: another Stripe API origin (a loopback twin)." },
  STRIPE_API_CA_FILE: { default: "unset", description: "Tests only: PEM CA of `STRIPE_API_BASE`'s certificate." },
  PASSWORD_HASH_MEMORY_KIB: {
    default: "`65536` (64 MiB)",
    description:
      "Memory of each argon2id password hash (dashboard sign-up, password change and reset, `admin create-account --password`), KiB; time cost 2, one lane. At least `19456` (19 MiB, OWASP's smallest argon2id setting). A stored hash keeps the parameters it was made with: a change applies to passwords set afterwards. Each sign-in verification holds this much memory while it runs (at most 4 at once).",
  },
  BODY_TIMEOUT_MS: {
    default: `\`${DEFAULT_BODY_TIMEOUT_MS}\``,
    description:
      "How long a client may take to send a whole request body, ms, counted from when the service starts reading it; past it the answer is 408 `REQUEST_TIMEOUT` and the connection closes (a body trickled byte by byte never holds a connection longer).",
  },
  DB_CONNECT_TIMEOUT_SECONDS: { default: "`60`", description: "At start: how long an unreachable database is retried (with backoff, one log line per try) before the process exits non-zero." },
};

for (const [name, doc] of Object.entries(ENV_DOCS)) Object.assign(EnvSchema.properties[name as keyof Env], { description: doc.description, "x-default": doc.default });

/** The schema's variable names (deployment manifests may set only these and courier variables). */
export const ENV_VARIABLES: readonly string[] = Object.keys(EnvSchema.properties);
