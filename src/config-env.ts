/**
 * The environment the service reads, each variable once in {@link ENV}; from it come the typed settings, the
 * check of operators' text ({@link EnvSchema}) and the docs/deployment.md table (`bun run docs:env`).
 */
import { KindGuard, Type as T, type Static, type TLiteral, type TSchema, type TUnion } from "@sinclair/typebox";

import { RECEIVER_TIMEOUT_MS, RETRY_SCHEDULE_SECONDS } from "./domain/delivery.ts";
import { RECHECK_INTERVAL_SECONDS } from "./domain/following.ts";
import { ASYNC_LOOKUP_BUDGET_MS } from "./domain/limits.ts";

// The spec's numbers live beside their rules in src/domain/; configuration only overrides them.
export { RETRY_SCHEDULE_SECONDS };
export const SPEC_WEBHOOK_TIMEOUT_MS = RECEIVER_TIMEOUT_MS;
export const SPEC_RECHECK_INTERVAL_SECONDS = RECHECK_INTERVAL_SECONDS;
export const SPEC_ASYNC_BUDGET_MS = ASYNC_LOOKUP_BUDGET_MS;
/** Default memory of each argon2id password hash, KiB: `Bun.password`'s own argon2id default (64 MiB). */
export const DEFAULT_PASSWORD_HASH_MEMORY_KIB = 65_536;
/** Least memory of an argon2id password hash, KiB: OWASP Password Storage Cheat Sheet's smallest argon2id memory (19 MiB, t = 2, p = 1). */
export const MIN_PASSWORD_HASH_MEMORY_KIB = 19_456;
/** Time a client has to send a whole request body, ms (10 s: a 64 KiB body at 52 kbit/s, a slow mobile link). */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

/**
 * `x-default`: a default config.ts computes, or what unset means; `x-expected`: the text's form in an operator's
 * words, quoted by errors instead of the value (values may be secrets); `x-pattern`: a list's text.
 */
type Doc = { description: string; default?: unknown; "x-default"?: string };
const Int = (o: Doc & { minimum?: number; maximum?: number }) => T.Integer(o);
const Text = (o: Doc & { pattern?: string; minLength?: number; "x-expected"?: string }) => T.String(o);
const OneOf = <const V extends string[]>(values: V, o: Doc) => T.Union(values.map((v) => T.Literal(v)), o) as TUnion<TLiteral<V[number]>[]>;
const File = (description: string) => T.Optional(Text({ minLength: 1, description }));
const Port = (o: Doc) => Int({ maximum: 65_535, ...o });
const SecretsKey = (o: Doc) => {
  const expected = "32 bytes in base64 or base64url (43 to 88 characters of A-Z a-z 0-9 + / = _ -)";
  return T.Optional(Text({ pattern: "^[A-Za-z0-9+/=_-]{43,88}$", "x-expected": expected, ...o }));
};
const StripePrice = (description: string) =>
  T.Optional(Text({ pattern: "^price_[A-Za-z0-9_]+$", "x-expected": "a Stripe Price id (price_ and letters, digits or _)", description }));

/** Every variable of the service (courier variables excepted: config.ts's `COURIER_VAR`), in the docs' order. */
export const ENV = T.Object({
  DATABASE_URL: T.Optional(Text({
    pattern: "^postgres(ql)?://", "x-expected": "a URL starting with postgres:// or postgresql://", "x-default": "unset: embedded PostgreSQL under `DATA_DIR`",
    description: "PostgreSQL connection string (`postgres://user:pass@host:5432/db`). Set it for any deployment of more than one process.",
  })),
  DATA_DIR: Text({ minLength: 1, default: "./data", description: "Embedded database, generated self-signed certificate and generated secrets key." }),
  PORT: Port({ default: 8443, description: "Public port (HTTPS, or plain HTTP behind a TLS proxy with `TRUST_PROXY`)." }),
  HOST: T.Optional(Text({
    minLength: 1, "x-default": "`127.0.0.1` embedded, `0.0.0.0` with `DATABASE_URL` (the image sets `0.0.0.0`)",
    description: "Address the public port binds to.",
  })),
  TLS_CERT_FILE: File("PEM certificate to serve TLS with (with `TLS_KEY_FILE`); else a self-signed one is generated into `DATA_DIR`."),
  TLS_KEY_FILE: File("PEM private key for `TLS_CERT_FILE`."),
  TRUST_PROXY: T.Optional(Int({
    description: "Number of proxies in front that set `X-Forwarded-For`. The service then serves plain HTTP and answers 400 `HTTPS_REQUIRED` unless `X-Forwarded-Proto` is `https` (probes excepted).",
  })),
  PUBLIC_BASE_URL: T.Optional(Text({
    pattern: "^https?://[^\\s]+$", "x-expected": "an http:// or https:// URL without spaces", "x-default": "`https://localhost:PORT`",
    description: "The URL clients use; appears in links, the OpenAPI servers list and the Postman collection.",
  })),
  SECRETS_KEY: SecretsKey({
    "x-default": "generated into `DATA_DIR/secrets.key` (embedded database only)",
    description: "32 bytes, base64 or base64url, that encrypt webhook signing secrets. Every process on one database must share it; the database stores a check value and a process with another key refuses to start.",
  }),
  COURIER_MODE: T.Optional(OneOf(["sandbox", "live"], {
    "x-default": "`live` with `DATABASE_URL` or courier credentials, else `sandbox`",
    description: "`sandbox`: couriers without credentials answer from the built-in simulator and a development account is created. `live`: couriers without credentials are unavailable.",
  })),
  SANDBOX_STEP_SECONDS: Int({ default: 3600, description: "Simulator: seconds between the scripted status steps of a sandbox shipment." }),
  SANDBOX_ASYNC_SECONDS: Int({ default: 12, description: "Simulator: seconds the asynchronous (aggregator) path takes to answer." }),
  SANDBOX_PORT: Port({ default: 0, description: "Simulator: loopback port (`0`: any free port)." }),
  COURIER_TIMEOUT_MS: Int({ default: 10_000, description: "Timeout of one synchronous courier request, ms." }),
  COURIER_ASYNC_BUDGET_MS: Int({ default: SPEC_ASYNC_BUDGET_MS, description: "Total budget of an asynchronous (register and poll) courier lookup, ms." }),
  COURIER_CONCURRENCY: Int({ default: 32, description: "Courier calls in flight per courier and process; further calls queue." }),
  COURIER_QUEUE_LIMIT: T.Optional(Int({
    "x-default": "4 × `COURIER_CONCURRENCY`",
    description: "Lookups waiting per courier and process beyond those in flight. Past it, or when a lookup could not start within its budget, the answer is 503 `COURIER_BUSY` with `Retry-After` at once.",
  })),
  COURIER_RATE_LIMITS: T.Array(T.String({ pattern: "^[a-z0-9]+:[0-9]+(\\.[0-9]+)?:[0-9]+$" }), {
    default: [], "x-pattern": "^([a-z0-9]+:[0-9]+(\\.[0-9]+)?:[0-9]+(,[a-z0-9]+:[0-9]+(\\.[0-9]+)?:[0-9]+)*)?$",
    "x-expected": "comma-separated backend:perSecond:perDay entries (e.g. dhl:0.2:250; perDay 0 means no daily limit)",
    description:
      "Courier call budgets shared by every process on the database, per courier backend (the folder names under `src/modules/couriers/carriers/`) and credential: calls per second (decimals allowed) and per UTC day (`0`: none). Replaces the backend's published default (docs/capacity.md, \"Courier rate budgets\"); a listed backend is budgeted in sandbox mode too.",
  }),
  COURIER_LIVE_RESERVE_PERCENT: Int({
    default: 20, maximum: 90,
    description: "Share of each courier budget (per second and per day) that only live `/v1/track` lookups may use; re-checks are paced to the rest.",
  }),
  RECHECK_INTERVAL_SECONDS: Int({
    default: SPEC_RECHECK_INTERVAL_SECONDS,
    description: "Interval between re-checks of a followed shipment (± 10 % jitter). Set it the same on every process: API processes schedule the first re-check.",
  }),
  TERMINAL_REUSE_SECONDS: Int({
    default: 300,
    description: "A delivered, returned or cancelled shipment that this process fetched from the courier less than this many seconds ago is answered from that fetch, without calling the courier again (`FetchTime` \"0.000\"); `0` calls the courier on every lookup (docs/shipments.md, Lookups of finished shipments).",
  }),
  WEBHOOK_RETRY_SCHEDULE: T.Array(T.Integer(), {
    default: RETRY_SCHEDULE_SECONDS, "x-pattern": "^[0-9]+(,[0-9]+){4}$", "x-expected": "five whole numbers of seconds separated by commas",
    description: "Seconds before delivery retries 1 to 5.",
  }),
  WEBHOOK_TIMEOUT_MS: Int({ default: SPEC_WEBHOOK_TIMEOUT_MS, description: "Timeout of one webhook delivery attempt (per redirect hop), ms." }),
  WEBHOOK_ALLOW_PRIVATE_CIDRS: T.Array(T.String({ pattern: "^[0-9a-fA-F:.]+/\\d{1,3}$", "x-expected": "a CIDR range (address/prefix length)" }), {
    default: [],
    description: "Comma-separated private ranges webhooks may reach (tests and private networks; logged as a warning). Set it the same on every process: API processes check addresses when webhooks are created.",
  }),
  WEBHOOK_CA_FILE: File("Extra PEM CA trusted for webhook receivers."),
  WEBHOOK_POLL_SECONDS: Int({
    default: 1, minimum: 1,
    description: "Seconds between the delivery worker's backstop polls for retries coming due and missed notifications (a NOTIFY wakes it at once).",
  }),
  RECHECK_POLL_SECONDS: Int({ default: 5, minimum: 1, description: "Seconds between drains of the shipments due for a re-check." }),
  LEASE_SLACK_SECONDS: Int({
    default: 30,
    description: "How long a delivery or re-check claim outlives the longest its work may take; a killed process's claims are taken over after it.",
  }),
  TEST_WEBHOOKS_ENABLED: T.Boolean({ default: true, description: "Kill-switch for test fires (`false` answers 503 `TEST_WEBHOOKS_DISABLED`)." }),
  RETENTION_DAYS: Int({ default: 30, description: "Age after which delivered outbox rows, attempt logs and old events are pruned." }),
  ROLE: OneOf(["api", "worker", "all"], {
    default: "all", description: "`api` serves HTTP only; `worker` runs re-checks and webhook deliveries only (no public port); `all` both.",
  }),
  LOG_LEVEL: OneOf(["debug", "info", "warn", "error", "silent"], {
    default: "info", description: "`debug`, `info`, `warn`, `error` or `silent`. JSON lines on stdout, one access-log line per request at `info`.",
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: T.Optional(Text({
    pattern: "^https?://[^\\s]+$", "x-expected": "an http:// or https:// URL without spaces", "x-default": "unset (no traces, no tracing work)",
    description: "OpenTelemetry collector base URL; spans go to `<url>/v1/traces` as OTLP/HTTP JSON (docs/operations.md, Traces).",
  })),
  OTEL_SERVICE_NAME: Text({ minLength: 1, default: "courier-tracking-api", description: "`service.name` of the spans sent to `OTEL_EXPORTER_OTLP_ENDPOINT`." }),
  // Operations: probes and metrics port, key checks, shutdown and start-up budgets (docs/deployment.md).
  ADMIN_PORT: T.Optional(Port({
    "x-default": "unset (no internal port)",
    description: "Internal plain-HTTP port serving `/healthz`, `/readyz` and `/metrics` without a key, in every role (a worker's only port). Keep it off the internet.",
  })),
  ADMIN_HOST: Text({
    minLength: 1, default: "127.0.0.1", description: "Address the internal port binds to (`0.0.0.0` in a pod, so the kubelet and Prometheus reach it).",
  }),
  METRICS_TOKEN: T.Optional(Text({
    minLength: 16, "x-default": "unset (`/metrics` not served on the public port)",
    description: "At least 16 characters; `/metrics` on the public port answers only `Authorization: Bearer <token>`.",
  })),
  SECRETS_KEY_PREVIOUS: SecretsKey({ description: "The key before `SECRETS_KEY`, accepted for decryption only while rotating (see Rotating SECRETS_KEY)." }),
  SECRETS_KEY_GENERATE: T.Optional(OneOf(["single-node"], {
    description: "`single-node` allows a key generated into `DATA_DIR` with `DATABASE_URL` set (one process only); without it a deployment must set `SECRETS_KEY`.",
  })),
  SHUTDOWN_GRACE_SECONDS: Int({
    default: 30, description: "On SIGTERM: how long in-flight requests, re-checks and deliveries may take to finish before the process stops anyway.",
  }),
  BILLING_PROVIDER: T.Optional(OneOf(["sandbox", "manual", "stripe"], {
    "x-default": "`sandbox` with sandbox couriers and no `DATABASE_URL`, else `manual`",
    description: "Who confirms plan changes: `sandbox` (at once; refused with live couriers), `manual` (an operator approves with the admin CLI) or `stripe` (docs/billing.md).",
  })),
  STRIPE_SECRET_KEY: T.Optional(Text({
    pattern: "^(sk|rk)_[A-Za-z0-9_]+$", "x-expected": "a Stripe API key (sk_ or rk_ and letters, digits or _)",
    description: "With `BILLING_PROVIDER=stripe`: the Stripe API key (`sk_…` or a restricted `rk_…`).",
  })),
  STRIPE_WEBHOOK_SECRET: T.Optional(Text({
    pattern: "^whsec_[A-Za-z0-9+/=_-]+$", "x-expected": "a Stripe webhook signing secret (whsec_ and base64 characters)",
    description: "With `BILLING_PROVIDER=stripe`: the signing secret of the Stripe webhook endpoint (`whsec_…`).",
  })),
  STRIPE_PRICE_STARTER: StripePrice("Stripe Price id (`price_…`) of the starter plan; a plan without a price cannot be bought."),
  STRIPE_PRICE_PRO: StripePrice("Stripe Price id of the pro plan."),
  STRIPE_PRICE_GROWTH: StripePrice("Stripe Price id of the growth plan."),
  STRIPE_PRICE_BUSINESS: StripePrice("Stripe Price id of the business plan."),
  STRIPE_API_BASE: T.Optional(Text({
    pattern: "^https?://[^\\s/]+/?$", "x-expected": "an http:// or https:// origin without a path", "x-default": "unset (api.stripe.com)",
    description: "Tests only: another Stripe API origin (a loopback twin).",
  })),
  STRIPE_API_CA_FILE: File("Tests only: PEM CA of `STRIPE_API_BASE`'s certificate."),
  PASSWORD_HASH_MEMORY_KIB: Int({
    default: DEFAULT_PASSWORD_HASH_MEMORY_KIB, minimum: MIN_PASSWORD_HASH_MEMORY_KIB, maximum: 4_194_304,
    description:
      "Memory of each argon2id password hash (dashboard sign-up, password change and reset, `admin create-account --password`), KiB; time cost 2, one lane. The least is OWASP's smallest argon2id setting (19 MiB). A stored hash keeps the parameters it was made with: a change applies to passwords set afterwards. Each sign-in verification holds this much memory while it runs (at most 4 at once).",
  }),
  SMTP_URL: T.Optional(Text({
    pattern: "^smtps?://[^\\s]+$", "x-expected": "an smtp:// or smtps:// URL without spaces", "x-default": "unset (alerts are shown in the dashboard only)",
    description: "Mail server for owner alerts (docs/alerts.md): `smtps://user:pass@host:465` (TLS from the start) or `smtp://user:pass@host:587` (STARTTLS when offered). Percent-encode special characters in the user name and password.",
  })),
  ALERT_FROM: T.Optional(Text({
    minLength: 3, "x-default": "`Courier Tracking <alerts@HOST>`, HOST being `PUBLIC_BASE_URL`'s host name",
    description: "Sender (`From`) of alert emails, an address or `Name <address>`.",
  })),
  SMTP_CA_FILE: File("Extra PEM CA trusted for `SMTP_URL`'s certificate (a private mail relay)."),
  BODY_TIMEOUT_MS: Int({
    default: DEFAULT_BODY_TIMEOUT_MS, minimum: 1,
    description:
      "How long a client may take to send a whole request body, ms, counted from when the service starts reading it; past it the answer is 408 `REQUEST_TIMEOUT` and the connection closes (a body trickled byte by byte never holds a connection longer).",
  }),
  DB_CONNECT_TIMEOUT_SECONDS: Int({
    default: 60, description: "At start: how long an unreachable database is retried (with backoff, one log line per try) before the process exits non-zero.",
  }),
  DB_DEADLINE_SECONDS: Int({
    default: 4,
    minimum: 1,
    maximum: 600,
    description:
      "How long a statement may wait for the database's answer before its connection is taken for dead and the request answers 503; the wait for a free connection is half of it and the server's statement_timeout seven eighths of it (docs/deployment.md, \"When the database does not answer\").",
  }),
});

export type EnvName = keyof typeof ENV.properties;
export const ENV_NAMES = Object.keys(ENV.properties) as readonly EnvName[];
/** The schema's variable names (deployment manifests may set only these and courier variables). */
export const ENV_VARIABLES: readonly string[] = ENV_NAMES;

export type Env = Partial<Record<EnvName, string>>;
/** What a variable's text must look like: whole numbers as digits, booleans as true/false/1/0, lists comma-separated. */
function asText(s: TSchema): TSchema {
  if (KindGuard.IsInteger(s)) return T.String({ pattern: "^[0-9]+$", "x-expected": "a whole number (digits 0-9 only)" });
  if (KindGuard.IsBoolean(s)) return T.Union(["true", "false", "1", "0"].map((v) => T.Literal(v)));
  if (KindGuard.IsArray(s)) return T.String(s["x-pattern"] ? { pattern: s["x-pattern"], "x-expected": s["x-expected"] } : {});
  return s;
}
/** {@link ENV} as the text operators set: what config-problems.ts checks before the text is read as values. */
export const EnvSchema = T.Object(Object.fromEntries(ENV_NAMES.map((name) => [name, T.Optional(asText(ENV.properties[name]))])));

/** `SANDBOX_STEP_SECONDS` → `sandboxStepSeconds`: a variable's field in the settings. */
type Camel<S extends string> = S extends `${infer Head}_${infer Rest}` ? `${Lowercase<Head>}${Capitalize<Camel<Rest>>}` : Lowercase<S>;
export const camel = (name: string): string => name.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
/** Every variable's value, by field name (defaults applied; optional ones without a default may be undefined). */
export type Settings = { [K in keyof Values as Camel<K & string>]: Values[K] };
type Values = Static<typeof ENV>;

/** A whole number's bounds in words (`at least 1`, `19456..4194304`), for the docs and for errors; undefined if none. */
export function boundsOf({ minimum: min, maximum: max }: TSchema): string | undefined {
  if (min !== undefined && max !== undefined) return `${min}..${max}`;
  if (min !== undefined) return `at least ${min}`;
  return max === undefined ? undefined : `at most ${max}`;
}

/** Each variable's default and meaning as the docs table shows them (bounds appended to the meaning). */
export const ENV_DOCS = Object.fromEntries(
  ENV_NAMES.map((name) => {
    const s: TSchema = ENV.properties[name];
    const value = Array.isArray(s.default) ? s.default.join(",") : s.default;
    const shown = s["x-default"] ?? (value === undefined ? "unset" : value === "" ? "empty" : `\`${value}\``);
    const bounds = boundsOf(s);
    return [name, { default: String(shown), description: bounds ? `${s.description} Bounds: ${bounds}.` : s.description }];
  }),
) as Record<EnvName, { default: string; description: string }>;
