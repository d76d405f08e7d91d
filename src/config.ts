/**
 * Service configuration: one TypeBox schema for the environment, parsed once at
 * boot (docs/deployment.md lists every variable). Nothing else in `src/` reads `process.env`; tests
 * build a `Config` with {@link loadConfig} from a plain object instead.
 *
 * A bad configuration throws {@link ConfigError} naming every bad variable,
 * and `main.ts` stops the start with that one line.
 */
import { Type as T, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

/** Receivers are expected to answer within 5 seconds (spec: Events, Delivery rules 6). */
export const SPEC_WEBHOOK_TIMEOUT_MS = 5_000;
/** "Re-check frequency: most couriers 3 per day" (spec: Limits): one re-check every 8 hours. */
export const SPEC_RECHECK_INTERVAL_SECONDS = 86_400 / 3;
/** Asynchronous couriers "can take 10 to 30 seconds" (spec: Limits): the lookup budget is the upper end. */
export const SPEC_ASYNC_BUDGET_MS = 30_000;

const Bool = T.Union([T.Literal("true"), T.Literal("false"), T.Literal("1"), T.Literal("0")]);
const PositiveInt = T.String({ pattern: "^[0-9]+$" });
const StripePrice = T.String({ pattern: "^price_[A-Za-z0-9_]+$" });

/** Seconds before retries 1..5 (spec: Delivery rules 2: 1 min, 5 min, 30 min, 2 h, 24 h). */
export const RETRY_SCHEDULE_SECONDS = [60, 300, 1800, 7200, 86_400] as const;

/** Raw environment as text, exactly as operators set it. */
const EnvSchema = T.Object({
  DATABASE_URL: T.Optional(T.String({ pattern: "^postgres(ql)?://" })),
  DATA_DIR: T.Optional(T.String({ minLength: 1 })),
  PORT: T.Optional(PositiveInt),
  HOST: T.Optional(T.String({ minLength: 1 })),
  TLS_CERT_FILE: T.Optional(T.String({ minLength: 1 })),
  TLS_KEY_FILE: T.Optional(T.String({ minLength: 1 })),
  TRUST_PROXY: T.Optional(PositiveInt),
  PUBLIC_BASE_URL: T.Optional(T.String({ pattern: "^https?://[^\\s]+$" })),
  SECRETS_KEY: T.Optional(T.String({ pattern: "^[A-Za-z0-9+/=_-]{43,88}$" })),
  COURIER_MODE: T.Optional(T.Union([T.Literal("sandbox"), T.Literal("live")])),
  SANDBOX_STEP_SECONDS: T.Optional(PositiveInt),
  SANDBOX_ASYNC_SECONDS: T.Optional(PositiveInt),
  SANDBOX_PORT: T.Optional(PositiveInt),
  COURIER_TIMEOUT_MS: T.Optional(PositiveInt),
  COURIER_ASYNC_BUDGET_MS: T.Optional(PositiveInt),
  COURIER_CONCURRENCY: T.Optional(PositiveInt),
  COURIER_QUEUE_LIMIT: T.Optional(PositiveInt),
  RECHECK_INTERVAL_SECONDS: T.Optional(PositiveInt),
  WEBHOOK_RETRY_SCHEDULE: T.Optional(T.String({ pattern: "^[0-9]+(,[0-9]+){4}$" })),
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
  STRIPE_SECRET_KEY: T.Optional(T.String({ pattern: "^(sk|rk)_[A-Za-z0-9_]+$" })),
  STRIPE_WEBHOOK_SECRET: T.Optional(T.String({ pattern: "^whsec_[A-Za-z0-9+/=_-]+$" })),
  STRIPE_PRICE_STARTER: T.Optional(StripePrice),
  STRIPE_PRICE_PRO: T.Optional(StripePrice),
  STRIPE_PRICE_GROWTH: T.Optional(StripePrice),
  STRIPE_PRICE_BUSINESS: T.Optional(StripePrice),
  STRIPE_API_BASE: T.Optional(T.String({ pattern: "^https?://[^\\s/]+/?$" })),
  STRIPE_API_CA_FILE: T.Optional(T.String({ minLength: 1 })),
  // Operations: probes and metrics port, key checks, shutdown and start-up budgets (docs/deployment.md).
  ADMIN_PORT: T.Optional(PositiveInt),
  ADMIN_HOST: T.Optional(T.String({ minLength: 1 })),
  METRICS_TOKEN: T.Optional(T.String({ minLength: 16 })),
  SECRETS_KEY_PREVIOUS: T.Optional(T.String({ pattern: "^[A-Za-z0-9+/=_-]{43,88}$" })),
  SECRETS_KEY_GENERATE: T.Optional(T.Literal("single-node")),
  SHUTDOWN_GRACE_SECONDS: T.Optional(PositiveInt),
  DB_CONNECT_TIMEOUT_SECONDS: T.Optional(PositiveInt),
});
type Env = Static<typeof EnvSchema>;

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
  DB_CONNECT_TIMEOUT_SECONDS: { default: "`60`", description: "At start: how long an unreachable database is retried (with backoff, one log line per try) before the process exits non-zero." },
};

for (const [name, doc] of Object.entries(ENV_DOCS)) Object.assign(EnvSchema.properties[name as keyof Env], { description: doc.description, "x-default": doc.default });

/** The schema's variable names (deployment manifests may set only these and courier variables). */
export const ENV_VARIABLES: readonly string[] = Object.keys(EnvSchema.properties);


/** Courier credentials and base URLs: `<COURIER>_BASE_URL` plus each adapter's own variables. */
export type CourierEnv = Readonly<Record<string, string>>;

export interface Config {
  databaseUrl: string | undefined;
  dataDir: string;
  port: number;
  host: string;
  tls: { certFile: string; keyFile: string } | undefined;
  /** Number of proxies to trust in X-Forwarded-For; undefined = none (docs/spec-map.md, "Decisions", demo limit). */
  trustProxy: number | undefined;
  publicBaseUrl: string;
  /** Base64/base64url of 32 bytes; undefined = generated into DATA_DIR at start. */
  secretsKey: string | undefined;
  courierMode: "sandbox" | "live";
  sandboxStepSeconds: number;
  sandboxAsyncSeconds: number;
  /** Loopback port for the courier simulator; 0 = any free port. */
  sandboxPort: number;
  /** Per-request timeout for synchronous courier backends, ms (default 10,000). */
  courierTimeoutMs: number;
  /** Total budget of an asynchronous (register + poll) lookup, ms (default {@link SPEC_ASYNC_BUDGET_MS}). */
  courierAsyncBudgetMs: number;
  /** In-flight lookups per courier; further ones queue (docs/spec-map.md, "Decisions", concurrent lookups). */
  courierConcurrency: number;
  /** Lookups waiting per courier beyond those in flight; more are refused with 503 COURIER_BUSY (default 4 × concurrency). */
  courierQueueLimit: number;
  /** Seconds between re-checks of a followed shipment (default {@link SPEC_RECHECK_INTERVAL_SECONDS}). */
  recheckIntervalSeconds: number;
  /** Seconds before retries 1..5 (default {@link RETRY_SCHEDULE_SECONDS}). */
  webhookRetryScheduleSeconds: number[];
  webhookTimeoutMs: number;
  webhookAllowPrivateCidrs: string[];
  webhookCaFile: string | undefined;
  /** Seconds between the delivery worker's backstop polls (NOTIFY wakes it at once; default 1). */
  webhookPollSeconds: number;
  /** Seconds between re-check drains (default 5). */
  recheckPollSeconds: number;
  /** Seconds a claim lease outlives the longest a claimed job may take (deliveries and re-checks; default 30). */
  leaseSlackSeconds: number;
  testWebhooksEnabled: boolean;
  retentionDays: number;
  role: "api" | "worker" | "all";
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /** Every `*_BASE_URL` and courier credential variable, by name. */
  courierEnv: CourierEnv;
  /** Who confirms plan changes (docs/billing.md); `stripe` carries its settings. */
  billing: BillingConfig;
  // Operations (docs/deployment.md).
  /** Internal plain-HTTP port for /healthz, /readyz and /metrics; undefined = none. */
  adminPort: number | undefined;
  adminHost: string;
  /** Bearer token that opens `/metrics` on the public port; undefined = not served there. */
  metricsToken: string | undefined;
  /** The key before the current one, accepted for decryption only (rotation). */
  secretsKeyPrevious: string | undefined;
  /** True when the operator allows a generated key with DATABASE_URL set (one process only). */
  secretsKeyGenerateSingleNode: boolean;
  /** How long SIGTERM waits for in-flight requests and jobs, seconds. */
  shutdownGraceSeconds: number;
  /** How long start-up retries an unreachable database before giving up, seconds. */
  dbConnectTimeoutSeconds: number;
}

/**
 * Billing provider (docs/billing.md). `sandbox` approves at once and is
 * refused with live couriers; `manual` records requests an operator approves;
 * `stripe` changes plans only on Stripe's signed webhook events.
 */
export type BillingConfig =
  | { provider: "sandbox" | "manual" }
  | {
      provider: "stripe";
      secretKey: string;
      webhookSecret: string;
      /** Stripe Price id per paid plan; a plan without one cannot be bought through Checkout. */
      prices: Partial<Record<"starter" | "pro" | "growth" | "business", string>>;
      /** Stripe API origin override (a loopback Stripe twin in tests); undefined = api.stripe.com. */
      apiBase: URL | undefined;
      /** PEM file of the CA that signed `apiBase`'s certificate (tests only). */
      apiCaFile: string | undefined;
    };

/** One bad variable: its name and what is wrong with it. */
export interface ConfigProblem {
  variable: string;
  detail: string;
}

/**
 * A configuration that cannot start the service. `problems` lists EVERY bad
 * variable (the message names them all, on one line), so an operator fixes
 * them in one go.
 */
export class ConfigError extends Error {
  readonly problems: ConfigProblem[];
  constructor(variable: string, detail: string, more: ConfigProblem[] = []) {
    const problems = [{ variable, detail }, ...more];
    super(`invalid configuration: ${problems.map((p) => `${p.variable} ${p.detail}`).join("; ")}`);
    this.problems = problems;
  }
  get variable(): string {
    return this.problems[0]!.variable;
  }
  /** @throws ConfigError when `problems` is not empty. */
  static throwIfAny(problems: ConfigProblem[]): void {
    if (problems.length) throw new ConfigError(problems[0]!.variable, problems[0]!.detail, problems.slice(1));
  }
}


/** Variables that belong to courier adapters (read by the adapters through `config.courierEnv`). */
export const COURIER_VAR = /^(DHL|FEDEX|UPS|DELHIVERY|BLUEDART|DTDC|ARAMEX|ECOMEXPRESS|XPRESSBEES|TRACK17|SEVENTEENTRACK)_[A-Z0-9_]+$/;
const COURIER_CREDENTIAL = /_(API_KEY|TOKEN|CLIENT_ID|CLIENT_SECRET|LOGIN_ID|LICENSE_KEY|USERNAME|PASSWORD|ACCOUNT_[A-Z_]+|EMAIL)$/;

/**
 * Parses the environment into a {@link Config}.
 * @param env usually `process.env`; tests pass a plain object.
 * @throws ConfigError naming every bad variable.
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const v = env[key];
    if (v !== undefined && v !== "") raw[key] = v;
  }
  const problems = schemaProblems(raw);
  const e = raw as Env;
  const courierEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v && COURIER_VAR.test(k)) courierEnv[k] = v;
  const hasCredentials = Object.keys(courierEnv).some((k) => COURIER_CREDENTIAL.test(k));

  if (Boolean(e.TLS_CERT_FILE) !== Boolean(e.TLS_KEY_FILE))
    problems.push({ variable: e.TLS_CERT_FILE ? "TLS_KEY_FILE" : "TLS_CERT_FILE", detail: "must be set together with its pair" });
  const port = int(e.PORT, 8443, "PORT");
  if (port > 65535) problems.push({ variable: "PORT", detail: "must be at most 65535" });
  const retry = e.WEBHOOK_RETRY_SCHEDULE ? e.WEBHOOK_RETRY_SCHEDULE.split(",").map(Number) : [...RETRY_SCHEDULE_SECONDS];
  const cidrs = (e.WEBHOOK_ALLOW_PRIVATE_CIDRS ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  for (const c of cidrs) if (!/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(c)) problems.push({ variable: "WEBHOOK_ALLOW_PRIVATE_CIDRS", detail: `has a bad CIDR ${JSON.stringify(c)}` });
  const adminPort = e.ADMIN_PORT === undefined ? undefined : int(e.ADMIN_PORT, 0, "ADMIN_PORT");
  const portValid = !problems.some((p) => p.variable === "PORT");
  if (adminPort !== undefined && (adminPort > 65535 || (portValid && adminPort === port))) problems.push({ variable: "ADMIN_PORT", detail: "must be at most 65535 and differ from PORT" });
  // With DATABASE_URL (a deployment) the simulator needs COURIER_MODE=sandbox explicitly.
  const courierMode = e.COURIER_MODE ?? (hasCredentials || e.DATABASE_URL ? "live" : "sandbox");
  let billing: BillingConfig = { provider: "manual" };
  try {
    billing = billingConfig(e, courierMode);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  ConfigError.throwIfAny(problems);

  return {
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR ?? "./data",
    port,
    host: e.HOST ?? (e.DATABASE_URL ? "0.0.0.0" : "127.0.0.1"),
    tls: e.TLS_CERT_FILE && e.TLS_KEY_FILE ? { certFile: e.TLS_CERT_FILE, keyFile: e.TLS_KEY_FILE } : undefined,
    trustProxy: e.TRUST_PROXY === undefined ? undefined : int(e.TRUST_PROXY, 0, "TRUST_PROXY"),
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `https://localhost:${port}`).replace(/\/+$/, ""),
    secretsKey: e.SECRETS_KEY,
    courierMode,
    sandboxStepSeconds: int(e.SANDBOX_STEP_SECONDS, 3600, "SANDBOX_STEP_SECONDS"),
    sandboxAsyncSeconds: int(e.SANDBOX_ASYNC_SECONDS, 12, "SANDBOX_ASYNC_SECONDS"),
    sandboxPort: int(e.SANDBOX_PORT, 0, "SANDBOX_PORT"),
    courierTimeoutMs: int(e.COURIER_TIMEOUT_MS, 10_000, "COURIER_TIMEOUT_MS"),
    courierAsyncBudgetMs: int(e.COURIER_ASYNC_BUDGET_MS, SPEC_ASYNC_BUDGET_MS, "COURIER_ASYNC_BUDGET_MS"),
    courierConcurrency: int(e.COURIER_CONCURRENCY, 32, "COURIER_CONCURRENCY"),
    courierQueueLimit: int(e.COURIER_QUEUE_LIMIT, 4 * int(e.COURIER_CONCURRENCY, 32, "COURIER_CONCURRENCY"), "COURIER_QUEUE_LIMIT"),
    recheckIntervalSeconds: int(e.RECHECK_INTERVAL_SECONDS, SPEC_RECHECK_INTERVAL_SECONDS, "RECHECK_INTERVAL_SECONDS"),
    webhookRetryScheduleSeconds: retry,
    webhookTimeoutMs: int(e.WEBHOOK_TIMEOUT_MS, SPEC_WEBHOOK_TIMEOUT_MS, "WEBHOOK_TIMEOUT_MS"),
    webhookAllowPrivateCidrs: cidrs,
    webhookCaFile: e.WEBHOOK_CA_FILE,
    webhookPollSeconds: atLeast1(e.WEBHOOK_POLL_SECONDS, 1, "WEBHOOK_POLL_SECONDS"),
    recheckPollSeconds: atLeast1(e.RECHECK_POLL_SECONDS, 5, "RECHECK_POLL_SECONDS"),
    leaseSlackSeconds: int(e.LEASE_SLACK_SECONDS, 30, "LEASE_SLACK_SECONDS"),
    testWebhooksEnabled: !(e.TEST_WEBHOOKS_ENABLED === "false" || e.TEST_WEBHOOKS_ENABLED === "0"),
    retentionDays: int(e.RETENTION_DAYS, 30, "RETENTION_DAYS"),
    role: e.ROLE ?? "all",
    logLevel: e.LOG_LEVEL ?? "info",
    courierEnv,
    billing,
    adminPort,
    adminHost: e.ADMIN_HOST ?? "127.0.0.1",
    metricsToken: e.METRICS_TOKEN,
    secretsKeyPrevious: e.SECRETS_KEY_PREVIOUS,
    secretsKeyGenerateSingleNode: e.SECRETS_KEY_GENERATE === "single-node",
    shutdownGraceSeconds: int(e.SHUTDOWN_GRACE_SECONDS, 30, "SHUTDOWN_GRACE_SECONDS"),
    dbConnectTimeoutSeconds: int(e.DB_CONNECT_TIMEOUT_SECONDS, 60, "DB_CONNECT_TIMEOUT_SECONDS"),
  };
}

/**
 * The billing provider: `sandbox` by default only for the self-contained
 * start (sandbox couriers and the embedded database), `manual` otherwise;
 * `sandbox` with live couriers is refused, since it hands out paid plans free.
 */
function billingConfig(e: Env, courierMode: "sandbox" | "live"): BillingConfig {
  const provider = e.BILLING_PROVIDER ?? (courierMode === "sandbox" && !e.DATABASE_URL ? "sandbox" : "manual");
  if (provider === "sandbox" && courierMode !== "sandbox")
    throw new ConfigError("BILLING_PROVIDER", "is sandbox, which approves every plan change free of charge; it is allowed only with COURIER_MODE=sandbox");
  if (provider !== "stripe") return { provider };
  if (!e.STRIPE_SECRET_KEY) throw new ConfigError("STRIPE_SECRET_KEY", "is required with BILLING_PROVIDER=stripe");
  if (!e.STRIPE_WEBHOOK_SECRET) throw new ConfigError("STRIPE_WEBHOOK_SECRET", "is required with BILLING_PROVIDER=stripe");
  const prices = { starter: e.STRIPE_PRICE_STARTER, pro: e.STRIPE_PRICE_PRO, growth: e.STRIPE_PRICE_GROWTH, business: e.STRIPE_PRICE_BUSINESS };
  const priced = Object.fromEntries(Object.entries(prices).filter(([, v]) => v)) as Partial<Record<keyof typeof prices, string>>;
  if (Object.keys(priced).length === 0) throw new ConfigError("STRIPE_PRICE_STARTER", "or another STRIPE_PRICE_<PLAN> is required with BILLING_PROVIDER=stripe");
  if (new Set(Object.values(priced)).size !== Object.keys(priced).length) throw new ConfigError("STRIPE_PRICE_STARTER", "and the other STRIPE_PRICE_<PLAN> must name different prices");
  if (e.STRIPE_API_CA_FILE && !e.STRIPE_API_BASE) throw new ConfigError("STRIPE_API_CA_FILE", "is only used together with STRIPE_API_BASE");
  return {
    provider,
    secretKey: e.STRIPE_SECRET_KEY,
    webhookSecret: e.STRIPE_WEBHOOK_SECRET,
    prices: priced,
    apiBase: e.STRIPE_API_BASE ? new URL(e.STRIPE_API_BASE) : undefined,
    apiCaFile: e.STRIPE_API_CA_FILE,
  };
}

/** Every schema violation, one per variable, worded for an operator. */
function schemaProblems(raw: Record<string, string>): ConfigProblem[] {
  const seen = new Set<string>();
  const out: ConfigProblem[] = [];
  for (const err of Value.Errors(EnvSchema, raw)) {
    const variable = err.path.replace(/^\//, "") || "environment";
    if (seen.has(variable)) continue;
    seen.add(variable);
    const schema = EnvSchema.properties[variable as keyof Env] as { anyOf?: { const?: unknown }[]; const?: unknown } | undefined;
    const choices = schema?.anyOf?.map((s) => s.const) ?? (schema?.const !== undefined ? [schema.const] : undefined);
    const why = choices?.every((c) => typeof c === "string") ? `must be one of ${choices.join(", ")}` : err.message;
    out.push({ variable, detail: `(${JSON.stringify(raw[variable] ?? "")}): ${why}` });
  }
  return out;
}

function atLeast1(v: string | undefined, fallback: number, name: string): number {
  const n = int(v, fallback, name);
  if (n < 1) throw new ConfigError(name, "must be at least 1");
  return n;
}

function int(v: string | undefined, fallback: number, name: string): number {
  // Values that are not digits were already reported by the schema check (with every other problem).
  if (v === undefined || !/^[0-9]+$/.test(v)) return fallback;
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new ConfigError(name, "is not a whole number");
  return n;
}

/** The process environment, parsed once. Only `main.ts` and the CLI call this. */
export function configFromProcess(): Config {
  return loadConfig(process.env);
}
