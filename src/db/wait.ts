/** The start-up wait for the database: a JSON line per failed try, one clear line (never the password) when giving up. */
import postgres from "postgres";
import { databaseTls, DatabaseTlsError, probeTls } from "./tls.ts";
import type { Logger } from "../lib/log.ts";

/** Start-up gave up on the database; the message is the one line the operator reads. */
export class DatabaseUnreachableError extends Error {}

/** Driver and network codes worth retrying at start: the server is down, starting, restarting or full. */
const RETRYABLE =
  /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|ENOTFOUND|EPIPE|CONNECT_TIMEOUT|CONNECTION_CLOSED|CONNECTION_ENDED|CONNECTION_DESTROYED|57P0[123]|08\d{3}|53300)$/;

/** Host and port of a single-host URL (a multi-host one is left to postgres-js). */
function hostAndPort(url: string): { host: string; port: number } | undefined {
  try {
    const u = new URL(url);
    return { host: u.hostname.replace(/^\[(.*)\]$/, "$1") || "localhost", port: Number(u.port || 5432) };
  } catch {
    return undefined;
  }
}

/** `host:port/database` of a connection string: what a log line may say about it (never the password). */
export function describeDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}${u.pathname}`;
  } catch {
    return "(unparsable DATABASE_URL)";
  }
}

/**
 * Waits until `url` answers `select 1`, retrying connectivity failures (0.5 s doubling to 5 s) for `timeoutSeconds`.
 * Failures retrying cannot fix (password, database, TLS via {@link probeTls}) end the wait at once.
 * @throws DatabaseUnreachableError with a one-line reason (never the URL's password)
 */
export async function waitForDatabase(url: string, opts: { timeoutSeconds: number; log: Logger }): Promise<void> {
  const started = Date.now();
  const deadline = started + opts.timeoutSeconds * 1000;
  const where = describeDatabaseUrl(url);
  let tls: ReturnType<typeof databaseTls>;
  try {
    tls = databaseTls(url);
  } catch (err) {
    if (err instanceof DatabaseTlsError) throw new DatabaseUnreachableError(`${err.message}; database ${where}`);
    throw err;
  }
  const target = hostAndPort(tls.url);
  const tlsSettings = `sslmode=${tls.mode}${tls.rootCert ? `, sslrootcert=${tls.rootCert}` : ""}`;
  let delay = 500;
  for (let attempt = 1; ; attempt++) {
    const left = deadline - Date.now();
    const connectSeconds = Math.max(1, Math.min(5, Math.ceil(left / 1000)));
    let failure: { code: string; message: string };
    if (typeof tls.ssl === "object" && target) {
      const checked = await probeTls(target.host, target.port, tls.ssl, connectSeconds * 1000);
      if (!checked.ok && !checked.retryable)
        throw new DatabaseUnreachableError(
          `DATABASE_URL: TLS to ${where} failed with ${tlsSettings}: ${checked.code}: ${checked.reason}; not retrying`,
        );
    }
    const probe = postgres(tls.url, { ssl: tls.ssl, max: 1, connect_timeout: connectSeconds, onnotice: () => {} });
    try {
      await probe`select 1`;
      if (attempt > 1) opts.log.info("database reachable", { database: where, attempt });
      return;
    } catch (err) {
      const e = err as { code?: unknown; message?: unknown };
      failure = {
        code: typeof e.code === "string" ? e.code : "UNKNOWN",
        message: String(e.message ?? err).slice(0, 200),
      };
    } finally {
      await probe.end({ timeout: 1 }).catch(() => {});
    }
    const elapsed = Math.round((Date.now() - started) / 1000);
    if (!RETRYABLE.test(failure.code))
      throw new DatabaseUnreachableError(
        `database ${where} refused the connection (${failure.code}: ${failure.message}); not retrying`,
      );
    if (Date.now() + delay > deadline)
      throw new DatabaseUnreachableError(
        `database ${where} not reachable after ${attempt} tries in ${elapsed} s (${failure.code}); giving up (DB_CONNECT_TIMEOUT_SECONDS=${opts.timeoutSeconds})`,
      );
    opts.log.warn("database not reachable; retrying", {
      database: where,
      attempt,
      code: failure.code,
      retry_in_ms: delay,
    });
    await Bun.sleep(delay);
    delay = Math.min(5_000, delay * 2);
  }
}
