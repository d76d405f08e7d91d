/** Configuration as an operator meets it (docs/deployment.md, Environment variables). */
import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config.ts";

describe("configuration", () => {
  test("a bad configuration reports every bad variable at once, in one line", () => {
    let err: ConfigError | undefined;
    try {
      loadConfig({ PORT: "eighty", ROLE: "boss", COURIER_MODE: "fake", TLS_KEY_FILE: "/k", WEBHOOK_ALLOW_PRIVATE_CIDRS: "10.0.0.0/8,nonsense", ADMIN_PORT: "8443", METRICS_TOKEN: "short" });
    } catch (e) {
      err = e as ConfigError;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.problems.map((p) => p.variable).sort()).toEqual(["COURIER_MODE", "METRICS_TOKEN", "PORT", "ROLE", "TLS_CERT_FILE", "WEBHOOK_ALLOW_PRIVATE_CIDRS"]);
    expect(err!.message).not.toContain("\n");
    expect(err!.message).toContain("ROLE (\"boss\"): must be one of api, worker, all");
    // ADMIN_PORT equal to PORT is caught once the values parse.
    expect(() => loadConfig({ ADMIN_PORT: "8443" })).toThrow(/ADMIN_PORT/);
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
    expect([c.adminPort, c.adminHost, c.metricsToken, c.shutdownGraceSeconds, c.dbConnectTimeoutSeconds, c.secretsKeyGenerateSingleNode]).toEqual([undefined, "127.0.0.1", undefined, 30, 60, false]);
    const d = loadConfig({ ADMIN_PORT: "9090", ADMIN_HOST: "0.0.0.0", SHUTDOWN_GRACE_SECONDS: "5", DB_CONNECT_TIMEOUT_SECONDS: "2", SECRETS_KEY_GENERATE: "single-node" });
    expect([d.adminPort, d.adminHost, d.shutdownGraceSeconds, d.dbConnectTimeoutSeconds, d.secretsKeyGenerateSingleNode]).toEqual([9090, "0.0.0.0", 5, 2, true]);
  });
});
