/** Checks of the raw environment that name what is wrong with a variable, never its value (values are often secrets). */
import { KindGuard, type TSchema } from "@sinclair/typebox";
import { Value, ValueErrorType } from "@sinclair/typebox/value";
import { boundsOf, camel, ENV, ENV_NAMES, EnvSchema, type Env, type EnvName, type Settings } from "./env.ts";

/** One bad variable: its name and what is wrong with it (never its value). */
export interface ConfigProblem {
  variable: string;
  detail: string;
}

/** Every violation of the text schema, one per variable, worded for an operator (pasted white space included). */
export function textProblems(raw: Env): ConfigProblem[] {
  const seen = new Set<string>();
  const out: ConfigProblem[] = [];
  for (const err of Value.Errors(EnvSchema, raw)) {
    const variable = err.path.replace(/^\//, "") || "environment";
    if (seen.has(variable)) continue;
    seen.add(variable);
    const schema = EnvSchema.properties[variable] as
      | { anyOf?: { const?: unknown }[]; const?: unknown; minLength?: number; "x-expected"?: string }
      | undefined;
    const choices = schema?.anyOf?.map((s) => s.const) ?? (schema?.const !== undefined ? [schema.const] : undefined);
    const value = raw[variable as EnvName] ?? "";
    let why: string;
    if (choices?.every((c) => typeof c === "string")) why = `must be one of ${choices.join(", ")}`;
    else if (schema?.minLength !== undefined && [...value].length < schema.minLength)
      why = `must be at least ${schema.minLength} characters long`;
    else if (schema?.["x-expected"]) why = `must be ${schema["x-expected"]}`;
    else why = "has an unexpected value";
    if (value.trim() !== value) why += " (the value has white space at its start or end)";
    out.push({ variable, detail: why });
  }
  return out;
}

/** The settings `raw` holds, with every value out of bounds added to `problems` (those variables keep defaults). */
export function readSettings(raw: Env, problems: ConfigProblem[]): Settings {
  const values: Record<string, unknown> = {};
  for (const name of ENV_NAMES) {
    const text = raw[name];
    if (text !== undefined && !problems.some((p) => p.variable === name))
      values[name] = fromText(ENV.properties[name], text);
  }
  const settled = Value.Default(ENV, values) as Record<string, unknown>;
  const seen = new Set<string>();
  for (const err of Value.Errors(ENV, settled)) {
    if (seen.has(err.path)) continue;
    seen.add(err.path);
    const [, variable = "environment", item] = err.path.split("/");
    if (item !== undefined)
      problems.push({ variable, detail: `item ${Number(item) + 1} is not ${err.schema["x-expected"]}` });
    else if (err.type === ValueErrorType.Integer) problems.push({ variable, detail: "is not a whole number" });
    else problems.push({ variable, detail: `must be ${boundsOf(err.schema) ?? "of another kind"}` });
  }
  return Object.fromEntries(ENV_NAMES.map((name) => [camel(name), settled[name]])) as Settings;
}

/** A variable's checked text as the value its schema describes (a whole number past 2^53 becomes NaN, refused after). */
function fromText(s: TSchema, text: string): unknown {
  if (KindGuard.IsInteger(s)) return Number.isSafeInteger(Number(text)) ? Number(text) : Number.NaN;
  if (KindGuard.IsBoolean(s)) return text === "true" || text === "1";
  if (KindGuard.IsArray(s))
    return text
      .split(",")
      .map((item) => item.trim())
      .filter(Boolean)
      .map((item) => fromText(s.items, item));
  return text;
}

/** URLs that match their pattern but do not parse or lack a host, named by variable without the text. */
export function urlProblems(
  e: Env,
  courierEnv: Readonly<Record<string, string>>,
  reported: ConfigProblem[],
): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const check = (variable: string, value: string | undefined, hint = "") => {
    if (value === undefined || reported.some((p) => p.variable === variable)) return;
    let u: URL;
    try {
      u = new URL(value);
    } catch {
      return out.push({ variable, detail: `is not a valid URL${hint}` });
    }
    if (!u.hostname) out.push({ variable, detail: "has no host name" });
  };
  check(
    "DATABASE_URL",
    e.DATABASE_URL,
    " (percent-encode special characters such as @ : / # ? % in the user name and password)",
  );
  check("PUBLIC_BASE_URL", e.PUBLIC_BASE_URL);
  check("STRIPE_API_BASE", e.STRIPE_API_BASE);
  check("OTEL_EXPORTER_OTLP_ENDPOINT", e.OTEL_EXPORTER_OTLP_ENDPOINT);
  check(
    "SMTP_URL",
    e.SMTP_URL,
    " (percent-encode special characters such as @ : / # ? % in the user name and password)",
  );
  for (const [k, v] of Object.entries(courierEnv)) {
    if (!k.endsWith("_BASE_URL")) continue;
    if (!/^https?:\/\//i.test(v)) out.push({ variable: k, detail: "must be an http:// or https:// URL" });
    else check(k, v);
  }
  return out;
}
