/**
 * Structured logging through pino: one JSON object per line on stdout,
 * `{"level":"info","time":"<ISO 8601>",…base,…fields,"msg":"…"}`
 * (decisions: docs/logging.md).
 *
 * Callers pass fields, never secrets: API keys, passwords, signing secrets and
 * courier credentials are not logged anywhere. As a second line of defence,
 * pino redacts by path ({@link REDACT_PATHS}) and every `Error` field is reduced
 * to `{name, message, code?}`: no stack frames, no SQL, no query parameters.
 * The access log ({@link Logger.access}) is the exception: its fields are fixed
 * and secret-free, so its lines skip both.
 *
 * Every line logged while a request is being answered carries that request's
 * `request_id` ({@link runInRequestScope}).
 */
import { AsyncLocalStorage } from "node:async_hooks";
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
  /**
   * The access log's logger: same output, level and base, but no redaction, no error reduction and no request
   * id added. Only for lines whose fields are fixed and carry no secret (http/access-log.ts passes its own id).
   */
  access(): Logger;
  /** Writes every buffered line now, synchronously (no-op for an unbuffered logger). Call it before `process.exit`; never throws. */
  flush(): void;
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

/**
 * The request being answered, for the log lines it causes. `open` turns false once its answer is logged, so a
 * timer or batch that merely started during the request (a quota give-back, a key-use stamp) does not carry
 * its id in lines written later.
 */
export interface RequestScope {
  readonly id: string;
  open: boolean;
}
const requestScope = new AsyncLocalStorage<RequestScope>();

/**
 * Runs `fn(arg)` in `scope`: every line logged by it, and by what it awaits, carries `request_id: scope.id`
 * (pino's `mixin`) while `scope.open` holds. The access log passes its own id and does not read the scope.
 */
export function runInRequestScope<A, R>(scope: RequestScope, fn: (arg: A) => R, arg: A): R {
  return requestScope.run(scope, fn, arg);
}

/** The request id of the request being answered, if any (for code that logs through something other than pino). */
export function currentRequestId(): string | undefined {
  const s = requestScope.getStore();
  return s?.open ? s.id : undefined;
}

/** pino's `mixin`: a fresh object each call (pino assigns the line's own fields onto it; those win). */
function requestIdMixin(): Fields {
  const s = requestScope.getStore();
  return s?.open ? { request_id: s.id } : {};
}

/** How long buffered lines may wait before they are written, ms. */
export const LOG_FLUSH_INTERVAL_MS = 100;
/** Buffered characters that trigger a write at once (about 35 access lines). */
const LOG_BUFFER_CHARS = 8 * 1024;

interface Output {
  stream: pino.DestinationStream;
  flush(): void;
}

/**
 * Lines collected in an array and handed to SonicBoom (synchronous, unbuffered: it does the `write(2)`, partial
 * writes, EAGAIN and EPIPE) as one chunk once 8 Ki characters wait or every {@link LOG_FLUSH_INTERVAL_MS} —
 * a few hundred writes a second at most instead of one per line. Each write completes before `flush` returns,
 * so nothing is in flight on another thread when the process exits. Collected here rather than with SonicBoom's
 * own `minLength`: that appends each line to one growing string and measures its bytes again on every write,
 * which cost ~8 µs a line inside the service (docs/logging.md, "Destination").
 */
function bufferedOutput(file?: string): Output {
  const sonic = pino.destination({ dest: file ?? 1, sync: true });
  let lines: string[] = [];
  let chars = 0;
  const flush = () => {
    if (lines.length === 0) return;
    const chunk = lines.join("");
    lines = [];
    chars = 0;
    try {
      sonic.write(chunk);
    } catch {
      // Destroyed (EPIPE: nobody reads stdout any more): nothing can be written.
    }
  };
  setInterval(flush, LOG_FLUSH_INTERVAL_MS).unref();
  // A safety net for an exit that did not flush first (main.ts flushes on every exit it makes).
  process.once("exit", flush);
  const stream = {
    write(line: string) {
      lines.push(line);
      chars += line.length;
      if (chars >= LOG_BUFFER_CHARS) flush();
    },
  };
  return { stream, flush };
}

function output(write: ((line: string) => void) | undefined, buffered: boolean, file?: string): Output {
  if (write) return { stream: { write: (s: string) => write(s.endsWith("\n") ? s.slice(0, -1) : s) }, flush: () => {} };
  if (buffered) return bufferedOutput(file);
  return { stream: pino.destination({ dest: 1, sync: true }), flush: () => {} };
}

function wrap(p: pino.Logger, out: Output, access: () => Logger): Logger {
  const at = (lvl: "debug" | "info" | "warn" | "error") => (msg: string, fields?: Fields) => (fields ? p[lvl](fields, msg) : p[lvl](msg));
  return {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: (f) => wrap(p.child(serializeErrors(f)), out, access),
    enabled: (lvl) => p.isLevelEnabled(lvl),
    access,
    flush: () => out.flush(),
  };
}

export interface LoggerOptions {
  /**
   * stdout through a buffer written every 8 KiB and every {@link LOG_FLUSH_INTERVAL_MS} (and on
   * {@link Logger.flush}); default false: each line written at once (CLIs, which exit right after).
   */
  buffered?: boolean;
  /** With `buffered`: append to this file instead of stdout (benches keep their own output clean). */
  file?: string;
}

/**
 * A logger at `level` (config `LOG_LEVEL`) whose lines carry `base`.
 * @param write receives each line without its newline (tests capture lines); default: stdout (see `opts`).
 */
export function createLogger(level: LogLevel = "info", base: Fields = {}, write?: (line: string) => void, opts: LoggerOptions = {}): Logger {
  const out = output(write, opts.buffered ?? false, opts.file);
  const common = { level, base, messageKey: "msg", timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label: string) => ({ level: label }) } };
  let accessLogger: Logger | undefined;
  // Built on first use: most loggers (CLIs, tests) never log an access line.
  const access = (): Logger => (accessLogger ??= wrap(pino(common, out.stream), out, access));
  return wrap(
    pino(
      {
        ...common,
        formatters: { ...common.formatters, log: serializeErrors },
        redact: { paths: [...REDACT_PATHS], censor: "[redacted]" },
        mixin: requestIdMixin,
      },
      out.stream,
    ),
    out,
    access,
  );
}

export const silentLogger: Logger = createLogger("silent");
