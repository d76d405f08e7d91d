/**
 * Service configuration: one TypeBox schema for the environment, parsed once at
 * boot (CONTRACT section 10). Nothing else in `src/` reads `process.env`; tests
 * build a `Config` with {@link loadConfig} from a plain object instead.
 *
 * A bad value throws {@link ConfigError} naming the variable, and `main.ts`
 * stops the start with that message.
 */
import { Type as T, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

const Bool = T.Union([T.Literal("true"), T.Literal("false"), T.Literal("1"), T.Literal("0")]);
const PositiveInt = T.String({ pattern: "^[0-9]+$" });

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
  RECHECK_INTERVAL_SECONDS: T.Optional(PositiveInt),
  WEBHOOK_RETRY_SCHEDULE: T.Optional(T.String({ pattern: "^[0-9]+(,[0-9]+){4}$" })),
  WEBHOOK_TIMEOUT_MS: T.Optional(PositiveInt),
  WEBHOOK_ALLOW_PRIVATE_CIDRS: T.Optional(T.String()),
  WEBHOOK_CA_FILE: T.Optional(T.String({ minLength: 1 })),
  TEST_WEBHOOKS_ENABLED: T.Optional(Bool),
  RETENTION_DAYS: T.Optional(PositiveInt),
  ROLE: T.Optional(T.Union([T.Literal("api"), T.Literal("worker"), T.Literal("all")])),
  LOG_LEVEL: T.Optional(T.Union([T.Literal("debug"), T.Literal("info"), T.Literal("warn"), T.Literal("error"), T.Literal("silent")])),
});
type Env = Static<typeof EnvSchema>;

/** Courier credentials and base URLs: `<COURIER>_BASE_URL` plus each adapter's own variables. */
export type CourierEnv = Readonly<Record<string, string>>;

export interface Config {
  databaseUrl: string | undefined;
  dataDir: string;
  port: number;
  host: string;
  tls: { certFile: string; keyFile: string } | undefined;
  /** Number of proxies to trust in X-Forwarded-For; undefined = none (CONTRACT 2, 8). */
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
  /** Total budget of an asynchronous (register + poll) lookup, ms (CONTRACT 4: 30 s). */
  courierAsyncBudgetMs: number;
  /** In-flight lookups per courier; further ones queue (CONTRACT 4 concurrency cap). */
  courierConcurrency: number;
  recheckIntervalSeconds: number;
  /** Seconds before retries 1..5 (spec: Delivery rules 2). */
  webhookRetryScheduleSeconds: number[];
  webhookTimeoutMs: number;
  webhookAllowPrivateCidrs: string[];
  webhookCaFile: string | undefined;
  testWebhooksEnabled: boolean;
  retentionDays: number;
  role: "api" | "worker" | "all";
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /** Every `*_BASE_URL` and courier credential variable, by name. */
  courierEnv: CourierEnv;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, detail: string) {
    super(`invalid configuration: ${variable} ${detail}`);
  }
}

/** Variables that belong to courier adapters (read by the adapters through `config.courierEnv`). */
const COURIER_VAR = /^(DHL|FEDEX|UPS|DELHIVERY|BLUEDART|DTDC|ARAMEX|ECOMEXPRESS|XPRESSBEES|TRACK17|SEVENTEENTRACK)_[A-Z0-9_]+$/;
const COURIER_CREDENTIAL = /_(API_KEY|TOKEN|CLIENT_ID|CLIENT_SECRET|LOGIN_ID|LICENSE_KEY|USERNAME|PASSWORD|ACCOUNT_[A-Z_]+|EMAIL)$/;

/**
 * Parses the environment into a {@link Config}.
 * @param env usually `process.env`; tests pass a plain object.
 * @throws ConfigError naming the first bad variable.
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const v = env[key];
    if (v !== undefined && v !== "") raw[key] = v;
  }
  const first = Value.Errors(EnvSchema, raw).First();
  if (first) {
    const variable = first.path.replace(/^\//, "") || "environment";
    throw new ConfigError(variable, `(${JSON.stringify(raw[variable] ?? "")}): ${first.message}`);
  }
  const e = raw as Env;
  const courierEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v && COURIER_VAR.test(k)) courierEnv[k] = v;
  const hasCredentials = Object.keys(courierEnv).some((k) => COURIER_CREDENTIAL.test(k));

  if (Boolean(e.TLS_CERT_FILE) !== Boolean(e.TLS_KEY_FILE))
    throw new ConfigError(e.TLS_CERT_FILE ? "TLS_KEY_FILE" : "TLS_CERT_FILE", "must be set together with its pair");
  const port = int(e.PORT, 8443, "PORT");
  if (port > 65535) throw new ConfigError("PORT", "must be at most 65535");
  const retry = (e.WEBHOOK_RETRY_SCHEDULE ?? "60,300,1800,7200,86400").split(",").map(Number);
  const cidrs = (e.WEBHOOK_ALLOW_PRIVATE_CIDRS ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  for (const c of cidrs) if (!/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(c)) throw new ConfigError("WEBHOOK_ALLOW_PRIVATE_CIDRS", `has a bad CIDR ${JSON.stringify(c)}`);

  return {
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR ?? "./data",
    port,
    host: e.HOST ?? (e.DATABASE_URL ? "0.0.0.0" : "127.0.0.1"),
    tls: e.TLS_CERT_FILE && e.TLS_KEY_FILE ? { certFile: e.TLS_CERT_FILE, keyFile: e.TLS_KEY_FILE } : undefined,
    trustProxy: e.TRUST_PROXY === undefined ? undefined : int(e.TRUST_PROXY, 0, "TRUST_PROXY"),
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `https://localhost:${port}`).replace(/\/+$/, ""),
    secretsKey: e.SECRETS_KEY,
    courierMode: e.COURIER_MODE ?? (hasCredentials ? "live" : "sandbox"),
    sandboxStepSeconds: int(e.SANDBOX_STEP_SECONDS, 3600, "SANDBOX_STEP_SECONDS"),
    sandboxAsyncSeconds: int(e.SANDBOX_ASYNC_SECONDS, 12, "SANDBOX_ASYNC_SECONDS"),
    sandboxPort: int(e.SANDBOX_PORT, 0, "SANDBOX_PORT"),
    courierTimeoutMs: int(e.COURIER_TIMEOUT_MS, 10_000, "COURIER_TIMEOUT_MS"),
    courierAsyncBudgetMs: int(e.COURIER_ASYNC_BUDGET_MS, 30_000, "COURIER_ASYNC_BUDGET_MS"),
    courierConcurrency: int(e.COURIER_CONCURRENCY, 32, "COURIER_CONCURRENCY"),
    recheckIntervalSeconds: int(e.RECHECK_INTERVAL_SECONDS, 28_800, "RECHECK_INTERVAL_SECONDS"),
    webhookRetryScheduleSeconds: retry,
    webhookTimeoutMs: int(e.WEBHOOK_TIMEOUT_MS, 5000, "WEBHOOK_TIMEOUT_MS"),
    webhookAllowPrivateCidrs: cidrs,
    webhookCaFile: e.WEBHOOK_CA_FILE,
    testWebhooksEnabled: !(e.TEST_WEBHOOKS_ENABLED === "false" || e.TEST_WEBHOOKS_ENABLED === "0"),
    retentionDays: int(e.RETENTION_DAYS, 30, "RETENTION_DAYS"),
    role: e.ROLE ?? "all",
    logLevel: e.LOG_LEVEL ?? "info",
    courierEnv,
  };
}

function int(v: string | undefined, fallback: number, name: string): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new ConfigError(name, "is not a whole number");
  return n;
}

/** The process environment, parsed once. Only `main.ts` and the CLI call this. */
export function configFromProcess(): Config {
  return loadConfig(process.env);
}
