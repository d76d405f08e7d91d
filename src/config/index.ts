/** Configuration, parsed once at boot (docs/deployment.md); src/configure.ts hands it the environment and the couriers. */
import { ENV_NAMES, type Env, type Settings } from "./env.ts";
import { readSettings, textProblems, urlProblems, type ConfigProblem } from "./problems.ts";

export { ENV_DOCS } from "./env.ts";

/** Courier credentials and base URLs: `<COURIER>_BASE_URL` plus each adapter's own variables. */
type CourierEnv = Readonly<Record<string, string>>;

/** Variables read into a composite field of {@link Config} (`tls`, `billing`, …) rather than one of their own. */
type Composed =
  | "tlsCertFile"
  | "tlsKeyFile"
  | "webhookRetrySchedule"
  | "secretsKeyGenerate"
  | "billingProvider"
  | `stripe${string}`;
/** Variables whose default depends on others: optional in the schema, always set in a {@link Config}. */
type Computed = "host" | "publicBaseUrl" | "courierMode" | "courierQueueLimit";

/** The settings the service runs with: one field per variable of config-env.ts (`PORT` → `port`), plus these. */
export type Config = Omit<Settings, Composed | Computed> &
  Required<Pick<Settings, Computed>> & {
    tls: { certFile: string; keyFile: string } | undefined;
    /** Seconds before retries 1..5 (`WEBHOOK_RETRY_SCHEDULE`). */
    webhookRetryScheduleSeconds: number[];
    /** True when the operator allows a generated key with DATABASE_URL set (`SECRETS_KEY_GENERATE=single-node`). */
    secretsKeyGenerateSingleNode: boolean;
    courierEnv: CourierEnv;
    /** Who confirms plan changes (docs/billing.md); `stripe` carries its settings. */
    billing: BillingConfig;
  };

/** Billing provider (docs/billing.md): `sandbox`, `manual` or `stripe`. */
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

export type { ConfigProblem } from "./problems.ts";

/** A configuration that cannot start the service; `problems` lists every bad variable, so all are fixed in one go. */
export class ConfigError extends Error {
  readonly problems: ConfigProblem[];
  /** The first bad variable. */
  readonly variable: string;
  constructor(variable: string, detail: string, more: ConfigProblem[] = []) {
    const problems = [{ variable, detail }, ...more];
    super(`invalid configuration: ${problems.map((p) => `${p.variable} ${p.detail}`).join("; ")}`);
    this.problems = problems;
    this.variable = variable;
  }
  static throwIfAny(problems: ConfigProblem[]): void {
    const [first, ...more] = problems;
    if (first) throw new ConfigError(first.variable, first.detail, more);
  }
}

/** The courier variables a configuration reads: the courier registry's, handed in by src/configure.ts. */
export interface CourierVariables {
  /** Environment prefixes: `DHL` picks `DHL_*` out of the environment. */
  prefixes: readonly string[];
  /** The backends COURIER_RATE_LIMITS and SANDBOX_DEGRADE may name (the folders under src/modules/couriers/carriers/). */
  backends: readonly string[];
}

/** The names of the courier variables: a listed prefix, `_`, then capitals, digits and `_`. */
export const courierVarPattern = (prefixes: readonly string[]): RegExp =>
  new RegExp(`^(${prefixes.join("|")})_[A-Z0-9_]+$`);

export const COURIER_CREDENTIAL =
  /_(API_KEY|TOKEN|CLIENT_ID|CLIENT_SECRET|LOGIN_ID|LICENSE_KEY|USERNAME|PASSWORD|ACCOUNT_[A-Z_]+|EMAIL)$/;

/** One backend's budget: calls per second (> 0) and per UTC day (0: no daily limit). */
export interface RateLimit {
  perSecond: number;
  perDay: number;
  /** Calls the shared bucket may hold at once; default one second of `perSecond` (courier/budget.ts). */
  burst?: number;
}

/** Parses COURIER_RATE_LIMITS (`backend:perSecond:perDay`). @throws Error for a backend not in `backends`, or rate 0 */
export function parseRateLimits(entries: readonly string[], backends: readonly string[]): Record<string, RateLimit> {
  const out: Record<string, RateLimit> = {};
  for (const e of entries) {
    const [id, perSecond, perDay] = e.split(":") as [string, string, string];
    if (!backends.includes(id)) throw new Error(`${id} is not a courier backend (one of ${backends.join(", ")})`);
    if (!(Number(perSecond) > 0)) throw new Error(`${id}: calls per second must be above 0`);
    out[id] = { perSecond: Number(perSecond), perDay: Number(perDay) };
  }
  return out;
}

/** The process environment parsed once with `couriers`' variables; nothing else reads `process.env`. @throws ConfigError */
export const parseProcessConfig = (couriers: CourierVariables): Config => parseConfig(process.env, couriers);

/**
 * Parses the environment into a {@link Config}, with `couriers`' variables (src/configure.ts's `loadConfig` passes
 * the registry's). @throws ConfigError naming every bad variable
 */
export function parseConfig(env: Record<string, string | undefined>, couriers: CourierVariables): Config {
  const courierVar = courierVarPattern(couriers.prefixes);
  const raw: Env = {};
  for (const name of ENV_NAMES) if (env[name]) raw[name] = env[name];
  const problems = textProblems(raw);
  const s = readSettings(raw, problems);
  const {
    tlsCertFile,
    tlsKeyFile,
    webhookRetrySchedule,
    secretsKeyGenerate,
    billingProvider,
    pgsslmode,
    pgsslrootcert,
    ...rest
  } = s;
  const courierEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v && courierVar.test(k)) courierEnv[k] = v;
  const hasCredentials = Object.keys(courierEnv).some((k) => COURIER_CREDENTIAL.test(k));

  if (Boolean(tlsCertFile) !== Boolean(tlsKeyFile))
    problems.push({
      variable: tlsCertFile ? "TLS_KEY_FILE" : "TLS_CERT_FILE",
      detail: "must be set together with its pair",
    });
  const portsValid = !problems.some((p) => p.variable === "PORT" || p.variable === "ADMIN_PORT");
  if (portsValid && s.adminPort === s.port) problems.push({ variable: "ADMIN_PORT", detail: "must differ from PORT" });
  // With DATABASE_URL (a deployment) the simulator needs COURIER_MODE=sandbox explicitly.
  const courierMode = s.courierMode ?? (hasCredentials || s.databaseUrl ? "live" : "sandbox");
  const billing = billingConfig(s, courierMode, problems);
  problems.push(...urlProblems(raw, courierEnv, problems));
  try {
    parseRateLimits(s.courierRateLimits, couriers.backends);
  } catch (err) {
    problems.push({ variable: "COURIER_RATE_LIMITS", detail: (err as Error).message });
  }
  for (const id of s.sandboxDegrade.map((e) => e.split(":")[0] ?? e))
    if (!couriers.backends.includes(id))
      problems.push({ variable: "SANDBOX_DEGRADE", detail: `${id} is not a courier backend` });
  ConfigError.throwIfAny(problems);

  const own = Object.fromEntries(Object.entries(rest).filter(([k]) => !k.startsWith("stripe"))) as Omit<
    typeof rest,
    `stripe${string}`
  >;
  return {
    ...own,
    databaseUrl:
      s.databaseUrl && withLibpqTlsDefaults(s.databaseUrl, { sslmode: pgsslmode, sslrootcert: pgsslrootcert }),
    host: s.host ?? (s.databaseUrl ? "0.0.0.0" : "127.0.0.1"),
    tls: tlsCertFile && tlsKeyFile ? { certFile: tlsCertFile, keyFile: tlsKeyFile } : undefined,
    publicBaseUrl: (s.publicBaseUrl ?? `https://localhost:${s.port}`).replace(/\/+$/, ""),
    courierMode,
    courierQueueLimit: s.courierQueueLimit ?? 4 * s.courierConcurrency,
    webhookRetryScheduleSeconds: [...webhookRetrySchedule],
    secretsKeyGenerateSingleNode: secretsKeyGenerate === "single-node",
    courierEnv,
    billing,
  };
}

/** The billing provider: `sandbox` only for the self-contained start, else `manual` (sandbox+live refused). */
function billingConfig(s: Settings, courierMode: "sandbox" | "live", problems: ConfigProblem[]): BillingConfig {
  const provider = s.billingProvider ?? (courierMode === "sandbox" && !s.databaseUrl ? "sandbox" : "manual");
  const refuse = (variable: string, detail: string): BillingConfig => {
    problems.push({ variable, detail });
    return { provider: "manual" };
  };
  if (provider === "sandbox" && courierMode !== "sandbox")
    return refuse(
      "BILLING_PROVIDER",
      "is sandbox, which approves every plan change free of charge; it is allowed only with COURIER_MODE=sandbox",
    );
  if (provider !== "stripe") return { provider };
  if (!s.stripeSecretKey) return refuse("STRIPE_SECRET_KEY", "is required with BILLING_PROVIDER=stripe");
  if (!s.stripeWebhookSecret) return refuse("STRIPE_WEBHOOK_SECRET", "is required with BILLING_PROVIDER=stripe");
  const prices = {
    starter: s.stripePriceStarter,
    pro: s.stripePricePro,
    growth: s.stripePriceGrowth,
    business: s.stripePriceBusiness,
  };
  const priced = Object.fromEntries(Object.entries(prices).filter(([, v]) => v)) as Partial<
    Record<keyof typeof prices, string>
  >;
  if (Object.keys(priced).length === 0)
    return refuse("STRIPE_PRICE_STARTER", "or another STRIPE_PRICE_<PLAN> is required with BILLING_PROVIDER=stripe");
  if (new Set(Object.values(priced)).size !== Object.keys(priced).length)
    return refuse("STRIPE_PRICE_STARTER", "and the other STRIPE_PRICE_<PLAN> must name different prices");
  if (s.stripeApiCaFile && !s.stripeApiBase)
    return refuse("STRIPE_API_CA_FILE", "is only used together with STRIPE_API_BASE");
  return {
    provider,
    secretKey: s.stripeSecretKey,
    webhookSecret: s.stripeWebhookSecret,
    prices: priced,
    // A base that does not parse is reported by urlProblems, with the other problems.
    apiBase: s.stripeApiBase && URL.canParse(s.stripeApiBase) ? new URL(s.stripeApiBase) : undefined,
    apiCaFile: s.stripeApiCaFile,
  };
}

/**
 * `url` with libpq's environment defaults (`PGSSLMODE`, `PGSSLROOTCERT`) written in as the
 * `sslmode` / `sslrootcert` parameters it does not already have: the URL's own win, as in libpq.
 */
function withLibpqTlsDefaults(url: string, defaults: { sslmode?: string; sslrootcert?: string }): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  for (const [name, value] of Object.entries(defaults))
    if (value && !u.searchParams.has(name)) u.searchParams.set(name, value);
  return u.toString();
}
