/** Server, TLS, database and request-time variables of config-env.ts's schema. */
import { Type as T } from "@sinclair/typebox";
import { File, Int, Port, SecretsKey, Text } from "./env-kinds.ts";

/** Time a client has to send a whole request body, ms (10 s: a 64 KiB body at 52 kbit/s, a slow mobile link). */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

/** Where the service listens and keeps its data. */
export const SERVER_ENV = {
  DATABASE_URL: T.Optional(
    Text({
      pattern: "^postgres(ql)?://",
      "x-expected": "a URL starting with postgres:// or postgresql://",
      "x-default": "unset: embedded PostgreSQL under `DATA_DIR`",
      description:
        "PostgreSQL connection string (`postgres://user:pass@host:5432/db`). Set it for any deployment of more than one process.",
    }),
  ),
  PGSSLMODE: T.Optional(
    Text({
      "x-default": "unset: `sslmode` of `DATABASE_URL`, else `disable`",
      description:
        'libpq\'s default `sslmode` for `DATABASE_URL` when the URL has none (`require`, `verify-ca`, `verify-full` …; docs/deployment.md, "Database TLS").',
    }),
  ),
  PGSSLROOTCERT: T.Optional(
    Text({
      "x-default": "unset: `sslrootcert` of `DATABASE_URL`",
      description:
        "libpq's default `sslrootcert` (a CA bundle file, or `system`) for `DATABASE_URL` when the URL has none.",
    }),
  ),
  DATA_DIR: Text({
    minLength: 1,
    default: "./data",
    description: "Embedded database, generated self-signed certificate and generated secrets key.",
  }),
  PORT: Port({
    default: 8443,
    description: "Public port (HTTPS, or plain HTTP behind a TLS proxy with `TRUST_PROXY`).",
  }),
  HOST: T.Optional(
    Text({
      minLength: 1,
      "x-default": "`127.0.0.1` embedded, `0.0.0.0` with `DATABASE_URL` (the image sets `0.0.0.0`)",
      description: "Address the public port binds to.",
    }),
  ),
  TLS_CERT_FILE: File(
    "PEM certificate to serve TLS with (with `TLS_KEY_FILE`); else a self-signed one is generated into `DATA_DIR`.",
  ),
  TLS_KEY_FILE: File("PEM private key for `TLS_CERT_FILE`."),
  TRUST_PROXY: T.Optional(
    Int({
      description:
        "Number of proxies in front that set `X-Forwarded-For`. The service then serves plain HTTP and answers 400 `HTTPS_REQUIRED` unless `X-Forwarded-Proto` is `https` (probes excepted).",
    }),
  ),
  PUBLIC_BASE_URL: T.Optional(
    Text({
      pattern: "^https?://[^\\s]+$",
      "x-expected": "an http:// or https:// URL without spaces",
      "x-default": "`https://localhost:PORT`",
      description: "The URL clients use; appears in links, the OpenAPI servers list and the Postman collection.",
    }),
  ),
  SECRETS_KEY: SecretsKey({
    "x-default": "generated into `DATA_DIR/secrets.key` (embedded database only)",
    description:
      "32 bytes, base64 or base64url, that encrypt webhook signing secrets. Every process on one database must share it; the database stores a check value and a process with another key refuses to start.",
  }),
};

/** How long a request body and the database may take. */
export const TIMEOUT_ENV = {
  BODY_TIMEOUT_MS: Int({
    default: DEFAULT_BODY_TIMEOUT_MS,
    minimum: 1,
    description:
      "How long a client may take to send a whole request body, ms, counted from when the service starts reading it; past it the answer is 408 `REQUEST_TIMEOUT` and the connection closes (a body trickled byte by byte never holds a connection longer).",
  }),
  DB_CONNECT_TIMEOUT_SECONDS: Int({
    default: 60,
    description:
      "At start: how long an unreachable database is retried (with backoff, one log line per try) before the process exits non-zero.",
  }),
  DB_DEADLINE_SECONDS: Int({
    default: 4,
    minimum: 1,
    maximum: 600,
    description:
      "How long a statement may wait for the database's answer before its connection is taken for dead and the request answers 503; the wait for a free connection is half of it, the server's statement_timeout seven eighths of it, and the deadline of all of one request's database waits together nine eighths of it (docs/deployment.md, \"When the database does not answer\").",
  }),
};
