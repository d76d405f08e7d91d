/** Configuration as an operator meets it (docs/deployment.md, Environment variables). */
import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../src/config/index.ts";
import { loadConfig } from "../../src/configure.ts";
import { withoutSecrets } from "../../src/config/secrets.ts";

describe("configuration", () => {
  test("PGSSLMODE and PGSSLROOTCERT fill the TLS parameters DATABASE_URL lacks; the URL's own win", () => {
    const base = "postgres://app:pw@db.example.com:5432/app";
    const env = { PGSSLMODE: "verify-full", PGSSLROOTCERT: "/etc/ssl/rds.pem" };
    const filled = new URL(loadConfig({ DATABASE_URL: base, ...env }).databaseUrl!);
    expect([filled.searchParams.get("sslmode"), filled.searchParams.get("sslrootcert")]).toEqual([
      "verify-full",
      "/etc/ssl/rds.pem",
    ]);
    const own = new URL(loadConfig({ DATABASE_URL: `${base}?sslmode=require`, ...env }).databaseUrl!);
    expect([own.searchParams.get("sslmode"), own.searchParams.get("sslrootcert")]).toEqual([
      "require",
      "/etc/ssl/rds.pem",
    ]);
    expect(loadConfig({ DATABASE_URL: base }).databaseUrl).toBe(base);
  });

  test("a bad configuration reports every bad variable at once, in one line", () => {
    let err: ConfigError | undefined;
    try {
      loadConfig({
        PORT: "eighty",
        ROLE: "boss",
        COURIER_MODE: "fake",
        TLS_KEY_FILE: "/k",
        WEBHOOK_ALLOW_PRIVATE_CIDRS: "10.0.0.0/8,nonsense",
        ADMIN_PORT: "8443",
        METRICS_TOKEN: "short",
      });
    } catch (e) {
      err = e as ConfigError;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.problems.map((p) => p.variable).sort()).toEqual([
      "COURIER_MODE",
      "METRICS_TOKEN",
      "PORT",
      "ROLE",
      "TLS_CERT_FILE",
      "WEBHOOK_ALLOW_PRIVATE_CIDRS",
    ]);
    expect(err!.message).not.toContain("\n");
    expect(err!.message).toContain("ROLE must be one of api, worker, all");
    expect(err!.message).toContain("PORT must be a whole number");
    expect(err!.message).toContain("WEBHOOK_ALLOW_PRIVATE_CIDRS item 2 is not a CIDR range");
    // Names and problems, never values: a value may be a secret, and this line goes to the log store.
    for (const value of ["eighty", "boss", "fake", "nonsense", "short"]) expect(err!.message).not.toContain(value);
    // ADMIN_PORT equal to PORT is caught once the values parse.
    expect(() => loadConfig({ ADMIN_PORT: "8443" })).toThrow(/ADMIN_PORT/);
  });

  test("URLs that do not parse are named by variable, without their text", () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (e) {
        return (e as ConfigError).problems;
      }
      return [];
    };
    expect(problems({ DATABASE_URL: "postgres://u:p4ss#w@rd@[::1/db" })).toEqual([
      { variable: "DATABASE_URL", detail: expect.stringContaining("is not a valid URL") },
    ]);
    expect(problems({ PUBLIC_BASE_URL: "https://[x" })).toEqual([
      { variable: "PUBLIC_BASE_URL", detail: "is not a valid URL" },
    ]);
    expect(problems({ DHL_BASE_URL: "ftp://dhl.example" })).toEqual([
      { variable: "DHL_BASE_URL", detail: "must be an http:// or https:// URL" },
    ]);
    expect(problems({ SECRETS_KEY: " abc", METRICS_TOKEN: "0123456789abcdef" })).toEqual([
      { variable: "SECRETS_KEY", detail: expect.stringContaining("white space at its start or end") },
    ]);
  });

  test("configSecrets and withoutSecrets: every configured secret comes out of a message, the URL's password decoded or not", () => {
    const c = loadConfig({
      DATABASE_URL: "postgres://app:p%40ss-w0rd-9@127.0.0.1:5432/app",
      SECRETS_KEY: "a".repeat(43),
      METRICS_TOKEN: "metrics-token-0123456789",
      DHL_API_KEY: "dhl-key-abcdef",
      COURIER_MODE: "sandbox",
      SECRETS_KEY_GENERATE: "single-node",
    });
    const text = `connect to postgres://app:p%40ss-w0rd-9@127.0.0.1 as p@ss-w0rd-9 with ${"a".repeat(43)}, metrics-token-0123456789, dhl-key-abcdef`;
    const clean = withoutSecrets(text, c);
    for (const s of ["p%40ss-w0rd-9", "p@ss-w0rd-9", "a".repeat(43), "metrics-token-0123456789", "dhl-key-abcdef"])
      expect(clean).not.toContain(s);
    expect(clean).toContain("127.0.0.1");
  });

  test("with DATABASE_URL couriers are live unless COURIER_MODE=sandbox is set; without it, sandbox", () => {
    const url = "postgres://u@127.0.0.1:5432/x";
    expect(loadConfig({ DATABASE_URL: url }).courierMode).toBe("live");
    expect(loadConfig({ DATABASE_URL: url, COURIER_MODE: "sandbox" }).courierMode).toBe("sandbox");
    expect(loadConfig({}).courierMode).toBe("sandbox");
    expect(loadConfig({ DHL_API_KEY: "k" }).courierMode).toBe("live");
  });

  test("operations defaults: no internal port, loopback admin host, 30 s grace, 60 s database wait", () => {
    const c = loadConfig({});
    expect([
      c.adminPort,
      c.adminHost,
      c.metricsToken,
      c.shutdownGraceSeconds,
      c.dbConnectTimeoutSeconds,
      c.secretsKeyGenerateSingleNode,
    ]).toEqual([undefined, "127.0.0.1", undefined, 30, 60, false]);
    const d = loadConfig({
      ADMIN_PORT: "9090",
      ADMIN_HOST: "0.0.0.0",
      SHUTDOWN_GRACE_SECONDS: "5",
      DB_CONNECT_TIMEOUT_SECONDS: "2",
      SECRETS_KEY_GENERATE: "single-node",
    });
    expect([
      d.adminPort,
      d.adminHost,
      d.shutdownGraceSeconds,
      d.dbConnectTimeoutSeconds,
      d.secretsKeyGenerateSingleNode,
    ]).toEqual([9090, "0.0.0.0", 5, 2, true]);
  });
});
