/** The one configuration schema (src/config/env.ts): defaults, bounds and field names all come from it. */
import { describe, expect, test } from "bun:test";
import { camel, ENV, ENV_DOCS, ENV_NAMES } from "../../src/config/env.ts";
import type { ConfigError } from "../../src/config/index.ts";
import { loadConfig } from "../../src/configure.ts";

const problemsOf = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (e) {
    return (e as ConfigError).problems;
  }
  return [];
};

describe("configuration schema", () => {
  test("the fields other modules read keep their names, one per variable (composites aside)", () => {
    expect(Object.keys(loadConfig({})).sort()).toEqual(
      [
        "adminHost",
        "adminPort",
        "billing",
        "bodyTimeoutMs",
        "courierAsyncBudgetMs",
        "courierConcurrency",
        "courierEnv",
        "courierLiveReservePercent",
        "courierMode",
        "courierQueueLimit",
        "courierRateLimits",
        "courierTimeoutMs",
        "dataDir",
        "databaseUrl",
        "dbConnectTimeoutSeconds",
        "dbDeadlineSeconds",
        "host",
        "leaseSlackSeconds",
        "logLevel",
        "metricsToken",
        "otelExporterOtlpEndpoint",
        "otelResourceAttributes",
        "otelServiceName",
        "passwordHashMemoryKib",
        "port",
        "publicBaseUrl",
        "recheckIntervalSeconds",
        "recheckPollSeconds",
        "retentionDays",
        "role",
        "sandboxAsyncSeconds",
        "sandboxDegrade",
        "sandboxPort",
        "sandboxStepSeconds",
        "secretsKey",
        "secretsKeyGenerateSingleNode",
        "secretsKeyPrevious",
        "shutdownGraceSeconds",
        "terminalReuseSeconds",
        "testWebhooksEnabled",
        "tls",
        "trustProxy",
        "webhookAllowPrivateCidrs",
        "webhookCaFile",
        "webhookPollSeconds",
        "webhookRetryScheduleSeconds",
        "webhookTimeoutMs",
        "alertFrom",
        "smtpCaFile",
        "smtpUrl",
      ].sort(),
    );
  });

  test("an unset variable takes its schema default, and the docs show that default", () => {
    const config = loadConfig({}) as unknown as Record<string, unknown>;
    const composed: Record<string, string> = { WEBHOOK_RETRY_SCHEDULE: "webhookRetryScheduleSeconds" };
    let checked = 0;
    for (const name of ENV_NAMES) {
      const fallback: unknown = ENV.properties[name].default;
      if (fallback === undefined) continue;
      checked++;
      expect([name, config[composed[name] ?? camel(name)]]).toEqual([name, fallback]);
      const shown = Array.isArray(fallback)
        ? fallback.length
          ? `\`${fallback.join(",")}\``
          : "empty"
        : `\`${fallback}\``;
      expect([name, ENV_DOCS[name].default]).toEqual([name, shown]);
    }
    expect(checked).toBeGreaterThan(20);
  });

  test("every whole-number variable refuses text that is not digits, naming the variable", () => {
    const ints = ENV_NAMES.filter((name) => (ENV.properties[name] as { type?: string }).type === "integer");
    expect(ints.length).toBeGreaterThan(20);
    for (const name of ints) {
      for (const bad of ["12abc", " 12", "1e3", "0x10", "-1", "1.5"]) {
        expect([name, bad, problemsOf({ [name]: bad })]).toEqual([
          name,
          bad,
          [{ variable: name, detail: expect.stringContaining("must be a whole number") }],
        ]);
      }
    }
  });

  test("bounds from the schema: below, above and past 2^53 are refused, all reported at once; the bounds are in the docs", () => {
    const problems = problemsOf({
      PORT: "65536",
      WEBHOOK_POLL_SECONDS: "0",
      PASSWORD_HASH_MEMORY_KIB: "19455",
      COURIER_TIMEOUT_MS: "99999999999999999999",
    });
    expect(problems.sort((a, b) => a.variable.localeCompare(b.variable))).toEqual([
      { variable: "COURIER_TIMEOUT_MS", detail: "is not a whole number" },
      { variable: "PASSWORD_HASH_MEMORY_KIB", detail: "must be 19456..4194304" },
      { variable: "PORT", detail: "must be at most 65535" },
      { variable: "WEBHOOK_POLL_SECONDS", detail: "must be at least 1" },
    ]);
    expect(loadConfig({ PORT: "65535", WEBHOOK_POLL_SECONDS: "1", PASSWORD_HASH_MEMORY_KIB: "4194304" }).port).toBe(
      65_535,
    );
    expect(ENV_DOCS.PASSWORD_HASH_MEMORY_KIB.description).toEndWith("Bounds: 19456..4194304.");
    expect(ENV_DOCS.BODY_TIMEOUT_MS.description).toEndWith("Bounds: at least 1.");
  });

  test("a list is read item by item: blanks dropped, each bad item named by position", () => {
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_CIDRS: " 10.0.0.0/8 ,, fd00::/8" }).webhookAllowPrivateCidrs).toEqual([
      "10.0.0.0/8",
      "fd00::/8",
    ]);
    expect(problemsOf({ WEBHOOK_ALLOW_PRIVATE_CIDRS: "a,10.0.0.0/8,b" })).toEqual([
      { variable: "WEBHOOK_ALLOW_PRIVATE_CIDRS", detail: "item 1 is not a CIDR range (address/prefix length)" },
      { variable: "WEBHOOK_ALLOW_PRIVATE_CIDRS", detail: "item 3 is not a CIDR range (address/prefix length)" },
    ]);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: "1,2,3,4,5" }).webhookRetryScheduleSeconds).toEqual([1, 2, 3, 4, 5]);
  });
});
