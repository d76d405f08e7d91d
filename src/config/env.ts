/**
 * The environment the service reads, each variable once in {@link ENV}; from it come the typed settings, the
 * check of operators' text ({@link EnvSchema}) and the docs/deployment.md table (`bun run docs:env`).
 */
import { KindGuard, Type as T, type Static, type TSchema } from "@sinclair/typebox";
import { ACCOUNT_ENV } from "./env-accounts.ts";
import { COURIER_ENV } from "./env-couriers.ts";
import { OPERATIONS_ENV } from "./env-operations.ts";
import { SERVER_ENV, TIMEOUT_ENV } from "./env-server.ts";
import { WEBHOOK_ENV } from "./env-webhooks.ts";

// The spec's numbers live beside their rules in src/domain/; configuration only overrides them.
export { DEFAULT_PASSWORD_HASH_MEMORY_KIB, MIN_PASSWORD_HASH_MEMORY_KIB } from "./env-accounts.ts";
export { DEFAULT_BODY_TIMEOUT_MS } from "./env-server.ts";

/** Every variable of the service (courier variables excepted: the courier registry's prefixes, src/configure.ts), in the docs' order. */
export const ENV = T.Object({
  ...SERVER_ENV,
  ...COURIER_ENV,
  ...WEBHOOK_ENV,
  ...OPERATIONS_ENV,
  ...ACCOUNT_ENV,
  ...TIMEOUT_ENV,
});

export type EnvName = keyof typeof ENV.properties;
/** The schema's variable names (deployment manifests may set only these and courier variables). */
export const ENV_NAMES = Object.keys(ENV.properties) as readonly EnvName[];

export type Env = Partial<Record<EnvName, string>>;
/** What a variable's text must look like: whole numbers as digits, booleans as true/false/1/0, lists comma-separated. */
function asText(s: TSchema): TSchema {
  if (KindGuard.IsInteger(s))
    return T.String({ pattern: "^[0-9]+$", "x-expected": "a whole number (digits 0-9 only)" });
  if (KindGuard.IsBoolean(s)) return T.Union(["true", "false", "1", "0"].map((v) => T.Literal(v)));
  if (KindGuard.IsArray(s))
    return T.String(s["x-pattern"] ? { pattern: s["x-pattern"], "x-expected": s["x-expected"] } : {});
  return s;
}
/** {@link ENV} as the text operators set: what problems.ts checks before the text is read as values. */
export const EnvSchema = T.Object(
  Object.fromEntries(ENV_NAMES.map((name) => [name, T.Optional(asText(ENV.properties[name]))])),
);

/** `SANDBOX_STEP_SECONDS` → `sandboxStepSeconds`: a variable's field in the settings. */
type Camel<S extends string> = S extends `${infer Head}_${infer Rest}`
  ? `${Lowercase<Head>}${Capitalize<Camel<Rest>>}`
  : Lowercase<S>;
export const camel = (name: string): string =>
  name.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
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
    return [
      name,
      { default: String(shown), description: bounds ? `${s.description} Bounds: ${bounds}.` : s.description },
    ];
  }),
) as Record<EnvName, { default: string; description: string }>;
