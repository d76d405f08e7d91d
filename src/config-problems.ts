/**
 * The checks of the raw environment that name what is wrong with a variable, never its value (config.ts
 * throws them together as one ConfigError): values are secrets often enough, and the error line ends up in
 * log stores (docs/deployment.md, Start-up and shutdown).
 */
import { Value } from "@sinclair/typebox/value";
import { EnvSchema, type Env } from "./config-env.ts";

/** One bad variable: its name and what is wrong with it (never its value). */
export interface ConfigProblem {
  variable: string;
  detail: string;
}

/** Entries of `WEBHOOK_ALLOW_PRIVATE_CIDRS` that are not `address/prefix`, by position. */
export function cidrProblems(cidrs: string[]): ConfigProblem[] {
  return cidrs.flatMap((c, i) =>
    /^[0-9a-fA-F:.]+\/\d{1,3}$/.test(c) ? [] : [{ variable: "WEBHOOK_ALLOW_PRIVATE_CIDRS", detail: `item ${i + 1} is not a CIDR range (address/prefix length)` }],
  );
}

/**
 * Every schema violation, one per variable, worded for an operator: what the value must be (the schema's
 * `x-expected`, its choices or its length), and whether it has white space at either end, the usual slip
 * when pasting a key. Never the value itself.
 */
export function schemaProblems(raw: Record<string, string>): ConfigProblem[] {
  const seen = new Set<string>();
  const out: ConfigProblem[] = [];
  for (const err of Value.Errors(EnvSchema, raw)) {
    const variable = err.path.replace(/^\//, "") || "environment";
    if (seen.has(variable)) continue;
    seen.add(variable);
    const schema = EnvSchema.properties[variable as keyof Env] as
      | { anyOf?: { const?: unknown }[]; const?: unknown; minLength?: number; "x-expected"?: string }
      | undefined;
    const choices = schema?.anyOf?.map((s) => s.const) ?? (schema?.const !== undefined ? [schema.const] : undefined);
    const value = raw[variable] ?? "";
    let why: string;
    if (choices?.every((c) => typeof c === "string")) why = `must be one of ${choices.join(", ")}`;
    else if (schema?.minLength !== undefined && [...value].length < schema.minLength) why = `must be at least ${schema.minLength} characters long`;
    else if (schema?.["x-expected"]) why = `must be ${schema["x-expected"]}`;
    else why = "has an unexpected value";
    if (value.trim() !== value) why += " (the value has white space at its start or end)";
    out.push({ variable, detail: why });
  }
  return out;
}

/**
 * URLs that match their pattern but do not parse, or lack a host: named by variable, without the text (a
 * `DATABASE_URL` holds a password). Variables already reported by the schema check are skipped.
 */
export function urlProblems(e: Env, courierEnv: Readonly<Record<string, string>>, reported: ConfigProblem[]): ConfigProblem[] {
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
  check("DATABASE_URL", e.DATABASE_URL, " (percent-encode special characters such as @ : / # ? % in the user name and password)");
  check("PUBLIC_BASE_URL", e.PUBLIC_BASE_URL);
  check("STRIPE_API_BASE", e.STRIPE_API_BASE);
  for (const [k, v] of Object.entries(courierEnv)) {
    if (!k.endsWith("_BASE_URL")) continue;
    if (!/^https?:\/\//i.test(v)) out.push({ variable: k, detail: "must be an http:// or https:// URL" });
    else check(k, v);
  }
  return out;
}
