/**
 * Service configuration: the environment schema (config-env.ts, with every
 * variable's documentation in ENV_DOCS) parsed once at boot
 * (docs/deployment.md lists every variable). Nothing else in `src/` reads `process.env`; tests
 * build a `Config` with {@link loadConfig} from a plain object instead.
 *
 * A bad configuration throws {@link ConfigError} naming every bad variable
 * and what is wrong with it, never its value (values may be secrets, and the
 * error line ends up in log stores), and `main.ts` stops the start with that
 * one line.
 */
import { cidrProblems, schemaProblems, urlProblems, type ConfigProblem } from "./config-problems.ts";
import { DEFAULT_BODY_TIMEOUT_MS, DEFAULT_PASSWORD_HASH_MEMORY_KIB, EnvSchema, MIN_PASSWORD_HASH_MEMORY_KIB, RETRY_SCHEDULE_SECONDS, SPEC_ASYNC_BUDGET_MS, SPEC_WEBHOOK_TIMEOUT_MS, SPEC_RECHECK_INTERVAL_SECONDS, type Env } from "./config-env.ts";

export { DEFAULT_BODY_TIMEOUT_MS, ENV_DOCS, ENV_VARIABLES, RETRY_SCHEDULE_SECONDS, SPEC_ASYNC_BUDGET_MS, SPEC_RECHECK_INTERVAL_SECONDS, SPEC_WEBHOOK_TIMEOUT_MS } from "./config-env.ts";

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
  /** Seconds a terminal shipment's fetch is reused for lookups in this process (0: never; docs/shipments.md). */
  terminalReuseSeconds: number;
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
  /** Memory of each argon2id password hash, KiB (modules/accounts/password.ts). */
  passwordHashMemoryKib: number;
  /** Time a client has to send a whole request body, ms (http/body.ts; 408 REQUEST_TIMEOUT past it). */
  bodyTimeoutMs: number;
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

export type { ConfigProblem } from "./config-problems.ts";

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
export const COURIER_CREDENTIAL = /_(API_KEY|TOKEN|CLIENT_ID|CLIENT_SECRET|LOGIN_ID|LICENSE_KEY|USERNAME|PASSWORD|ACCOUNT_[A-Z_]+|EMAIL)$/;

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
  problems.push(...cidrProblems(cidrs));
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
  const passwordHashMemoryKib = int(e.PASSWORD_HASH_MEMORY_KIB, DEFAULT_PASSWORD_HASH_MEMORY_KIB, "PASSWORD_HASH_MEMORY_KIB");
  if (passwordHashMemoryKib < MIN_PASSWORD_HASH_MEMORY_KIB || passwordHashMemoryKib > 4_194_304)
    problems.push({ variable: "PASSWORD_HASH_MEMORY_KIB", detail: `must be ${MIN_PASSWORD_HASH_MEMORY_KIB}..4194304 (KiB; OWASP's smallest argon2id memory is 19 MiB)` });
  problems.push(...urlProblems(e, courierEnv, problems));
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
    terminalReuseSeconds: int(e.TERMINAL_REUSE_SECONDS, 300, "TERMINAL_REUSE_SECONDS"),
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
    passwordHashMemoryKib,
    bodyTimeoutMs: atLeast1(e.BODY_TIMEOUT_MS, DEFAULT_BODY_TIMEOUT_MS, "BODY_TIMEOUT_MS"),
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
    // A base that does not parse is reported by urlProblems, with the other problems.
    apiBase: e.STRIPE_API_BASE && URL.canParse(e.STRIPE_API_BASE) ? new URL(e.STRIPE_API_BASE) : undefined,
    apiCaFile: e.STRIPE_API_CA_FILE,
  };
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
