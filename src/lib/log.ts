/** Structured logging through pino: one JSON object per line, secrets redacted (docs/logging.md). */
import { AsyncLocalStorage } from "node:async_hooks";
import pino from "pino";
import "./bun-quirks.ts";

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
  /** The access log's logger: no redaction, no error reduction, no request id; only for fixed, secret-free fields. */
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

/** pino redact paths: each secret key at the top level and one object down, and request/response auth headers. */
const REDACT_PATHS: readonly string[] = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
  ...["headers", "req.headers", "request.headers", "*.headers"].flatMap((h) => [
    `${h}.authorization`,
    `${h}.cookie`,
    `${h}["set-cookie"]`,
    `${h}["x-api-key"]`,
    `${h}["17token"]`,
    `${h}["dhl-api-key"]`,
  ]),
];

/** An error as log fields, never the stack; Drizzle's SQL-quoting message is replaced by its driver cause. */
function errorFields(e: Error): Fields {
  const src =
    (e.name === "DrizzleQueryError" || e.message.startsWith("Failed query")) && e.cause instanceof Error ? e.cause : e;
  const code = (src as { code?: unknown }).code;
  return {
    name: src.name,
    message: src.message.startsWith("Failed query") ? "query failed" : src.message.slice(0, 300),
    ...(code ? { code } : {}),
  };
}

function serializeErrors(obj: Fields): Fields {
  let out: Fields | undefined;
  for (const [k, v] of Object.entries(obj)) {
    if (!(v instanceof Error)) continue;
    out ??= { ...obj };
    out[k] = errorFields(v);
  }
  return out ?? obj;
}

/** The request being answered; `open` turns false once its answer is logged, so later lines do not carry its id. */
export interface RequestScope {
  readonly id: string;
  open: boolean;
}
const requestScope = new AsyncLocalStorage<RequestScope>();

/** Runs `fn(arg)` in `scope`: every line it logs, directly or after awaits, carries `request_id` while open. */
export function runInRequestScope<A, R>(scope: RequestScope, fn: (arg: A) => R, arg: A): R {
  return requestScope.run(scope, fn, arg);
}

/** The scope {@link runInRequestScope} opened around the running code; undefined outside any request. */
export function currentRequestScope(): RequestScope | undefined {
  return requestScope.getStore();
}

function requestIdMixin(): Fields {
  const s = requestScope.getStore();
  return s?.open ? { request_id: s.id } : {};
}

/** How long buffered lines may wait before they are written, ms. */
const LOG_FLUSH_INTERVAL_MS = 100;
/** Buffered characters that trigger a write at once (about 35 access lines). */
const LOG_BUFFER_CHARS = 8 * 1024;

interface Output {
  stream: pino.DestinationStream;
  flush(): void;
}

/** Lines handed to SonicBoom in chunks (docs/logging.md#destination). */
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
  const at = (lvl: "debug" | "info" | "warn" | "error") => (msg: string, fields?: Fields) =>
    fields ? p[lvl](fields, msg) : p[lvl](msg);
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
  /** Buffer stdout, written every 8 KiB and {@link LOG_FLUSH_INTERVAL_MS}; default false (CLIs exit right after). */
  buffered?: boolean;
  file?: string;
}

/** A logger at `level` whose lines carry `base`; `write` receives each line (tests), default stdout (see `opts`). */
export function createLogger(
  level: LogLevel = "info",
  base: Fields = {},
  write?: (line: string) => void,
  opts: LoggerOptions = {},
): Logger {
  const out = output(write, opts.buffered ?? false, opts.file);
  const common = {
    level,
    base,
    messageKey: "msg",
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  let accessLogger: Logger | undefined;
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
