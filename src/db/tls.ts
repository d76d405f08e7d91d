/** TLS to PostgreSQL read the way libpq reads it (docs/deployment.md#database-tls). */
import { readFileSync } from "node:fs";
import { Socket } from "node:net";
import * as tls from "node:tls";

/** The libpq modes we honour. `allow` and `prefer` use TLS when the server offers it, with no verification. */
const SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"] as const;
type SslMode = (typeof SSL_MODES)[number];

/** libpq client-certificate and tuning parameters we do not implement: refused with one line rather than ignored. */
const UNSUPPORTED = [
  "sslcert",
  "sslkey",
  "sslpassword",
  "sslcrl",
  "sslcrldir",
  "sslcertmode",
  "sslsni",
  "ssl_min_protocol_version",
  "ssl_max_protocol_version",
];

/** A DATABASE_URL's TLS settings are unusable (unknown mode, unreadable CA file); the message is the one line to log. */
export class DatabaseTlsError extends Error {}

export interface DatabaseTls {
  url: string;
  mode: SslMode;
  /** Where the trusted roots come from: a file path, "system" (Node's bundled roots) or undefined (none given). */
  rootCert: string | undefined;
  /** postgres-js's `ssl` option: false (no TLS), "prefer" (TLS if offered, unverified), or node:tls options. */
  ssl: false | "prefer" | tls.ConnectionOptions;
}

/**
 * Reads the TLS settings from `url` and `env` (`PGSSLMODE`, `PGSSLROOTCERT`; the service's config writes them into
 * `DATABASE_URL` instead) as libpq does (modes: docs/deployment.md#database-tls); our default
 * stays `disable` when nothing is set.
 * @throws DatabaseTlsError for an unknown mode, an unsupported parameter, or an unreadable root certificate file
 */
export function databaseTls(url: string, env: Record<string, string | undefined> = {}): DatabaseTls {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { url, mode: "disable", rootCert: undefined, ssl: false }; // postgres-js reports the URL itself
  }
  const params = u.searchParams;
  for (const name of UNSUPPORTED)
    if (params.has(name))
      throw new DatabaseTlsError(
        `DATABASE_URL: the parameter ${name} is not supported (docs/deployment.md, "Database TLS")`,
      );
  const rootCert = params.get("sslrootcert") ?? (env.PGSSLROOTCERT || undefined);
  const given = params.get("sslmode") ?? (env.PGSSLMODE || undefined);
  params.delete("sslmode");
  params.delete("sslrootcert");
  params.delete("ssl"); // postgres-js's own spelling of sslmode: one way to say it
  const stripped = u.toString();
  const mode = (given ?? (rootCert === "system" ? "verify-full" : "disable")) as SslMode;
  if (!SSL_MODES.includes(mode))
    throw new DatabaseTlsError(`DATABASE_URL: sslmode=${given} is not one of ${SSL_MODES.join(", ")}`);
  if (rootCert === "system" && mode !== "verify-full")
    throw new DatabaseTlsError(`DATABASE_URL: sslrootcert=system needs sslmode=verify-full, not ${mode} (as libpq)`);
  if (mode === "disable") return { url: stripped, mode, rootCert, ssl: false };
  if (mode === "allow" || mode === "prefer") return { url: stripped, mode, rootCert, ssl: "prefer" };
  const ca = rootCert && rootCert !== "system" ? readRootCert(rootCert) : undefined;
  if (mode === "require" && !rootCert) return { url: stripped, mode, rootCert, ssl: { rejectUnauthorized: false } };
  if ((mode === "verify-ca" || mode === "verify-full") && !rootCert)
    throw new DatabaseTlsError(
      `DATABASE_URL: sslmode=${mode} needs the CA bundle: sslrootcert=/path/to/ca.pem in the URL or PGSSLROOTCERT`,
    );
  const host = u.hostname.replace(/^\[(.*)\]$/, "$1");
  const checkServerIdentity =
    mode === "verify-full"
      ? (_name: string, cert: tls.PeerCertificate) => tls.checkServerIdentity(host, cert)
      : () => undefined;
  return {
    url: stripped,
    mode,
    rootCert,
    ssl: { rejectUnauthorized: true, ...(ca ? { ca } : {}), checkServerIdentity },
  };
}

function readRootCert(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new DatabaseTlsError(
      `DATABASE_URL: the root certificate file sslrootcert=${path} cannot be read (${(err as { code?: string }).code ?? "error"})`,
    );
  }
  if (!text.includes("-----BEGIN CERTIFICATE-----"))
    throw new DatabaseTlsError(
      `DATABASE_URL: sslrootcert=${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    );
  return text;
}

/** The outcome of {@link probeTls}: connected, a failure retrying may fix (the server is not up), or one it cannot. */
export type TlsProbe = { ok: true } | { ok: false; retryable: boolean; code: string; reason: string };

/** PostgreSQL's SSLRequest: length 8, then the code 80877103 (PostgreSQL docs, "Message Formats"). */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 4, 210, 22, 47]);

/** Asks `host:port` for TLS (SSLRequest) and handshakes, naming what postgres-js calls a reset; never rejects. */
export function probeTls(
  host: string,
  port: number,
  options: tls.ConnectionOptions,
  timeoutMs: number,
): Promise<TlsProbe> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let secure: tls.TLSSocket | undefined;
    let done = false;
    const finish = (result: TlsProbe) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      secure?.destroy();
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () =>
        finish({ ok: false, retryable: true, code: "CONNECT_TIMEOUT", reason: `no TLS answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
    socket.once("error", (e: Error & { code?: string }) =>
      finish({ ok: false, retryable: true, code: e.code ?? "ECONNERROR", reason: e.message }),
    );
    socket.once("close", () =>
      finish({ ok: false, retryable: true, code: "CONNECTION_CLOSED", reason: "the server closed the connection" }),
    );
    socket.once("data", (answer) => {
      if (answer[0] !== 0x53) {
        finish({
          ok: false,
          retryable: false,
          code: "TLS_NOT_OFFERED",
          reason: "the server does not accept TLS (it answered the SSLRequest with N)",
        });
        return;
      }
      socket.removeAllListeners("close");
      socket.removeAllListeners("error");
      // No SNI for an address (RFC 6066 §3); the name check itself is options.checkServerIdentity's.
      secure = tls.connect({ ...options, socket, servername: /^[\d.]+$|:/.test(host) ? undefined : host });
      secure.once("secureConnect", () => finish({ ok: true }));
      secure.once("error", (e: Error & { code?: string }) =>
        finish({ ok: false, retryable: false, code: e.code ?? "TLS_ERROR", reason: e.message }),
      );
      secure.once("close", () =>
        finish({
          ok: false,
          retryable: true,
          code: "CONNECTION_CLOSED",
          reason: "the server closed the TLS handshake",
        }),
      );
    });
    socket.connect(port, host, () => socket.write(SSL_REQUEST));
  });
}
