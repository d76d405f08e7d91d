/**
 * Structured logging through pino: one JSON object per line on stdout,
 * `{"level":"info","time":"<ISO 8601>",…base,…fields,"msg":"…"}`
 * (decisions: docs/logging.md).
 *
 * Callers pass fields, never secrets: API keys, passwords, signing secrets and
 * courier credentials are not logged anywhere. As a second line of defence,
 * pino redacts by path ({@link REDACT_PATHS}) and every `Error` field is reduced
 * to `{name, message, code?}`: no stack frames, no SQL, no query parameters.
 */
import pino from "pino";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

type Fields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  child(fields: Fields): Logger;
  /** True when a line at `level` would be written: lets a hot path skip building fields nobody reads. */
  enabled(level: Exclude<LogLevel, "silent">): boolean;
}

/** Field names that hold secrets (checked at the top level and one level down, e.g. `config.password`). */
const SECRET_KEYS = [
  "password",
  "passwd",
  "secret",
  "client_secret",
  "signing_secret",
  "signingSecret",
  "token",
  "access_token",
  "api_key",
  "apiKey",
  "key_secret",
  "authorization",
  "cookie",
  "license",
  "lickey",
  "credential",
  "credentials",
];

/**
 * pino redact paths: each secret key at the top level, one object down, and
 * the authorization/cookie headers of a logged request or response.
 * (pino's `*` matches one level; deeper secrets must not be logged at all.)
 */
export const REDACT_PATHS: readonly string[] = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
  ...["headers", "req.headers", "request.headers", "*.headers"].flatMap((h) => [`${h}.authorization`, `${h}.cookie`, `${h}["set-cookie"]`, `${h}["x-api-key"]`, `${h}["17token"]`, `${h}["dhl-api-key"]`]),
];

/**
 * An error as log fields: `{name, message, code?}` — never the stack.
 * Drizzle's own message quotes SQL and parameters, so its driver cause is
 * logged instead, and any message starting "Failed query" becomes "query failed".
 */
export function errorFields(e: Error): Fields {
  const src = (e.name === "DrizzleQueryError" || e.message.startsWith("Failed query")) && e.cause instanceof Error ? e.cause : e;
  const code = (src as { code?: unknown }).code;
  return { name: src.name, message: src.message.startsWith("Failed query") ? "query failed" : src.message.slice(0, 300), ...(code ? { code } : {}) };
}

/** Every top-level `Error` value becomes {@link errorFields}, whatever the key (`error`, `err`, `cause`…). */
function serializeErrors(obj: Fields): Fields {
  let out: Fields | undefined;
  for (const [k, v] of Object.entries(obj)) {
    if (v instanceof Error) (out ??= { ...obj })[k] = errorFields(v);
  }
  return out ?? obj;
}

function wrap(p: pino.Logger): Logger {
  const at = (lvl: "debug" | "info" | "warn" | "error") => (msg: string, fields?: Fields) => (fields ? p[lvl](fields, msg) : p[lvl](msg));
  return {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: (f) => wrap(p.child(serializeErrors(f))),
    enabled: (lvl) => p.isLevelEnabled(lvl),
  };
}

/**
 * A logger at `level` (config `LOG_LEVEL`) whose lines carry `base`.
 * @param write receives each line without its newline (tests capture lines); default: synchronous stdout.
 */
export function createLogger(level: LogLevel = "info", base: Fields = {}, write?: (line: string) => void): Logger {
  const dest = write ? { write: (s: string) => write(s.endsWith("\n") ? s.slice(0, -1) : s) } : pino.destination({ dest: 1, sync: true });
  return wrap(
    pino(
      {
        level,
        base,
        messageKey: "msg",
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }), log: serializeErrors },
        redact: { paths: [...REDACT_PATHS], censor: "[redacted]" },
      },
      dest,
    ),
  );
}

export const silentLogger: Logger = createLogger("silent");
