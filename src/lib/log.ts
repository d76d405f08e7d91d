/**
 * Structured logging: one JSON object per line on stdout (issue 4,
 * observability). Callers pass fields, never secrets: API keys, passwords,
 * signing secrets and courier credentials are not logged anywhere; as a
 * second line of defence, fields whose names look secret are redacted here.
 */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };
const SECRET_FIELD = /(pass(word)?|secret|token|api[_-]?key|authorization|license|credential)/i;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export function createLogger(level: LogLevel = "info", base: Record<string, unknown> = {}, write: (line: string) => void = (l) => process.stdout.write(l + "\n")): Logger {
  const min = ORDER[level];
  const emit = (lvl: Exclude<LogLevel, "silent">, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < min) return;
    const rec: Record<string, unknown> = { t: new Date().toISOString(), level: lvl, msg, ...base };
    if (fields) for (const [k, v] of Object.entries(fields)) rec[k] = SECRET_FIELD.test(k) ? "[redacted]" : v instanceof Error ? errorFields(v) : v;
    write(JSON.stringify(rec));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (f) => createLogger(level, { ...base, ...f }, write),
  };
}

export const silentLogger: Logger = createLogger("silent");

/** An error as log fields. Drizzle's own message quotes SQL and parameters, so its driver cause is logged instead. */
function errorFields(e: Error): Record<string, unknown> {
  const src = (e.name === "DrizzleQueryError" || e.message.startsWith("Failed query")) && e.cause instanceof Error ? e.cause : e;
  const code = (src as { code?: unknown }).code;
  return { name: src.name, message: src.message.startsWith("Failed query") ? "query failed" : src.message.slice(0, 300), ...(code ? { code } : {}) };
}
