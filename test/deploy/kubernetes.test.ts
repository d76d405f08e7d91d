/**
 * The Kubernetes manifests as `kubectl apply -k` sends them (docs/deployment.md, Kubernetes): every object
 * validates against its schema (kubernetes-models, prometheus-operator models for the CRDs); every pod
 * passes Pod Security "baseline" and "restricted" (pod-security.ts, the published rule list) with a
 * read-only root filesystem and the image's numeric user; the check itself fails on a pod that breaks
 * each rule; the migration Job's name follows the image tag; port 9090 is reachable only from the
 * monitoring namespace.
 */
import { describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { podOf, podSecurityViolations, RULES } from "./pod-security.ts";
import { HAS_KUBECTL, renderKustomization } from "./render.ts";
import pkg from "../../package.json" with { type: "json" };

const ROOT = join(import.meta.dir, "..", "..");
const BASE = join(ROOT, "deploy", "kubernetes");
const { objects, kustomized } = renderKustomization(BASE);
const monitoring = renderKustomization(join(BASE, "monitoring")).objects;
const workloads = objects.filter((o) => podOf(o));
const byKind = (kind: string) => objects.filter((o) => o.kind === kind);

/** The model class for an object's apiVersion and kind, from kubernetes-models or its prometheus-operator package. */
async function modelOf(o: { apiVersion: string; kind: string }): Promise<new (data: unknown) => { validate(): void }> {
  const path = o.apiVersion.startsWith("monitoring.coreos.com/")
    ? `@kubernetes-models/prometheus-operator/${o.apiVersion}`
    : `kubernetes-models/${o.apiVersion}`;
  const mod = (await import(path)) as Record<string, new (data: unknown) => { validate(): void }>;
  const model = mod[o.kind];
  if (!model) throw new Error(`no model for ${o.apiVersion} ${o.kind}`);
  return model;
}

describe("rendered manifests", () => {
  test("render with kubectl kustomize when kubectl is installed", () => {
    expect(kustomized).toBe(HAS_KUBECTL);
    expect(workloads.map((w) => `${w.kind}/${w.metadata.name}`).sort()).toEqual(
      kustomized
        ? [
            "Deployment/courier-tracking-api",
            "Deployment/courier-tracking-worker",
            "Job/courier-tracking-migrate-1.0.0",
          ]
        : [
            "Deployment/courier-tracking-api",
            "Deployment/courier-tracking-worker",
            "Job/courier-tracking-migrate-release",
          ],
    );
  });

  test("every object validates against its schema (the CRDs' too)", async () => {
    const all = [...objects, ...monitoring];
    expect(all.map((o) => o.kind).sort()).toEqual(
      [
        "ConfigMap",
        "Deployment",
        "Deployment",
        "HorizontalPodAutoscaler",
        "Ingress",
        "Job",
        "NetworkPolicy",
        "PodDisruptionBudget",
        "PrometheusRule",
        "Service",
        "Service",
        "ServiceMonitor",
      ].sort(),
    );
    for (const o of all) {
      const Model = await modelOf(o);
      expect([o.kind, o.metadata?.name, (() => (new Model(o).validate(), "valid"))()]).toEqual([
        o.kind,
        o.metadata?.name,
        "valid",
      ]);
    }
  });

  test("the schema check catches a wrong type (it can fail)", async () => {
    const job = structuredClone(byKind("Job")[0]);
    job.spec.template.spec.securityContext.runAsUser = "1000";
    const Model = await modelOf(job);
    expect(() => new Model(job).validate()).toThrow(/runAsUser must be integer/);
  });
});

describe('Pod Security "restricted"', () => {
  const dockerUser = /^USER (\d+):(\d+)$/m.exec(readFileSync(join(ROOT, "Dockerfile"), "utf8"));

  test("every pod passes baseline and restricted", () => {
    expect(workloads.length).toBe(3);
    for (const w of workloads) {
      expect([w.metadata.name, podSecurityViolations(w, "baseline")]).toEqual([w.metadata.name, []]);
      expect([w.metadata.name, podSecurityViolations(w, "restricted")]).toEqual([w.metadata.name, []]);
    }
  });

  test("the image's numeric non-root user, a read-only root filesystem, and emptyDir where the process writes", () => {
    expect(dockerUser).not.toBeNull();
    const [, uid, gid] = dockerUser!;
    expect(Number(uid)).toBeGreaterThan(0);
    for (const w of workloads) {
      const spec = podOf(w)!.spec;
      expect([w.metadata.name, spec.securityContext?.runAsUser, spec.securityContext?.runAsGroup]).toEqual([
        w.metadata.name,
        Number(uid),
        Number(gid),
      ]);
      const volumes = Object.fromEntries((spec.volumes ?? []).map((v: any) => [v.name, v]));
      for (const c of spec.containers!) {
        expect([w.metadata.name, c.securityContext?.readOnlyRootFilesystem]).toEqual([w.metadata.name, true]);
        const mounts = Object.fromEntries(((c as any).volumeMounts ?? []).map((m: any) => [m.mountPath, m.name]));
        // /tmp, and DATA_DIR (the image sets DATA_DIR=/data).
        for (const path of ["/tmp", "/data"])
          expect([w.metadata.name, path, Boolean(volumes[mounts[path]]?.emptyDir)]).toEqual([
            w.metadata.name,
            path,
            true,
          ]);
      }
    }
  });

  // A pod that passes both levels; each case below breaks exactly one rule of the standard.
  const good = () => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "fixture", annotations: {} as Record<string, string> },
    spec: {
      securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: "RuntimeDefault" } } as Record<
        string,
        any
      >,
      volumes: [{ name: "tmp", emptyDir: {} }] as Record<string, any>[],
      containers: [
        {
          name: "app",
          ports: [{ containerPort: 8443 }] as Record<string, number>[],
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } } as Record<string, any>,
        },
      ],
    } as Record<string, any>,
  });
  type Pod = ReturnType<typeof good>;
  const c0 = (p: Pod) => p.spec.containers[0].securityContext;
  const violations: [rule: string, level: "baseline" | "restricted", breakIt: (p: Pod) => void][] = [
    ["HostProcess", "baseline", (p) => (p.spec.securityContext.windowsOptions = { hostProcess: true })],
    ["Host Namespaces", "baseline", (p) => (p.spec.hostNetwork = true)],
    ["Privileged Containers", "baseline", (p) => (c0(p).privileged = true)],
    ["Capabilities (baseline)", "baseline", (p) => (c0(p).capabilities.add = ["SYS_ADMIN"])],
    ["HostPath Volumes", "baseline", (p) => p.spec.volumes.push({ name: "host", hostPath: { path: "/var/run" } })],
    ["Host Ports", "baseline", (p) => (p.spec.containers[0].ports[0]!.hostPort = 8443)],
    [
      "AppArmor",
      "baseline",
      (p) => (p.metadata.annotations["container.apparmor.security.beta.kubernetes.io/app"] = "unconfined"),
    ],
    ["SELinux", "baseline", (p) => (c0(p).seLinuxOptions = { type: "spc_t" })],
    ["/proc Mount Type", "baseline", (p) => (c0(p).procMount = "Unmasked")],
    ["Seccomp (baseline)", "baseline", (p) => (c0(p).seccompProfile = { type: "Unconfined" })],
    ["Sysctls", "baseline", (p) => (p.spec.securityContext.sysctls = [{ name: "kernel.msgmax", value: "65536" }])],
    [
      "Volume Types",
      "restricted",
      (p) => p.spec.volumes.push({ name: "nfs", nfs: { server: "nfs.example", path: "/" } }),
    ],
    ["Privilege Escalation", "restricted", (p) => delete c0(p).allowPrivilegeEscalation],
    ["Running as Non-root", "restricted", (p) => delete p.spec.securityContext.runAsNonRoot],
    ["Running as Non-root user", "restricted", (p) => (c0(p).runAsUser = 0)],
    ["Seccomp (restricted)", "restricted", (p) => delete p.spec.securityContext.seccompProfile],
    ["Capabilities (restricted)", "restricted", (p) => (c0(p).capabilities = { drop: ["NET_RAW"] })],
  ];

  test("the fixture pod passes, and the cases cover every rule of the check", () => {
    expect(podSecurityViolations(good(), "restricted")).toEqual([]);
    expect(violations.map(([r]) => r).sort()).toEqual(RULES.map((r) => r.id).sort());
  });

  for (const [rule, level, breakIt] of violations) {
    test(`a pod breaking "${rule}" fails at ${level}${level === "baseline" ? " and restricted" : " only"}`, () => {
      const pod = good();
      breakIt(pod);
      const restricted = podSecurityViolations(pod, "restricted");
      expect(restricted.some((v) => v.startsWith(`${rule}: `))).toBe(true);
      // A baseline break may also break the stricter restricted rule on the same field (hostPath is not an allowed
      // volume type, an added SYS_ADMIN is not NET_BIND_SERVICE), never an unrelated one.
      const related = new Set([
        rule,
        rule.replace("(baseline)", "(restricted)"),
        ...(rule === "HostPath Volumes" ? ["Volume Types"] : []),
      ]);
      expect(restricted.filter((v) => !related.has(v.slice(0, v.indexOf(": "))))).toEqual([]);
      const baseline = podSecurityViolations(pod, "baseline");
      expect(baseline.length > 0).toBe(level === "baseline");
      expect(baseline.every((v) => v.startsWith(`${rule}: `))).toBe(true);
      // The same break inside a Deployment's pod template is found too.
      const deployment = {
        apiVersion: "apps/v1",
        kind: "Deployment",
        spec: { template: { metadata: pod.metadata, spec: pod.spec } },
      };
      expect(podSecurityViolations(deployment, "restricted")).toEqual(restricted);
    });
  }

  test("an init container is checked like the others", () => {
    const pod = good();
    pod.spec.initContainers = [{ name: "init", securityContext: {} }];
    expect(podSecurityViolations(pod, "restricted")).toEqual([
      "Privilege Escalation: initContainers[init]",
      "Capabilities (restricted): initContainers[init] does not drop ALL",
    ]);
  });
});

/** Renders a copy of deploy/kubernetes after `edit(files)` changes its files (name → text). */
function renderEdited(edit: (files: { read(f: string): string; write(f: string, text: string): void }) => void) {
  const dir = mkdtempSync(join(tmpdir(), "k8s-edit-"));
  try {
    cpSync(BASE, dir, { recursive: true });
    edit({ read: (f) => readFileSync(join(dir, f), "utf8"), write: (f, text) => writeFileSync(join(dir, f), text) });
    return renderKustomization(dir).objects;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A Job name: a DNS-1123 subdomain that is also a label value (the pods' `job-name`), so at most 63 characters. */
const validJobName = (name: string) =>
  name.length <= 63 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name);

describe("the migration Job runs once per release", () => {
  const digest = `sha256:${"0123456789abcdef".repeat(4)}`;
  // [the kustomization's `images` entry, the image the pods run]
  const references: [string, string][] = [
    ["newTag: 1.2.3", "ghcr.io/example/courier-tracking:1.2.3"],
    ["newName: registry.local:5000/courier-tracking\n    newTag: 1.2.3", "registry.local:5000/courier-tracking:1.2.3"],
    [
      `newName: registry.local:5000/team/courier-tracking\n    digest: ${digest}`,
      `registry.local:5000/team/courier-tracking@${digest}`,
    ],
    [
      `newName: localhost:5000/courier-tracking\n    newTag: 1.2.3\n    digest: ${digest}`,
      `localhost:5000/courier-tracking:1.2.3@${digest}`,
    ],
  ];
  for (const [entry, image] of references)
    test.skipIf(!HAS_KUBECTL)(`its name is the release's, whatever the image reference: ${image}`, () => {
      const next = renderEdited(({ read, write }) => {
        write("kustomization.yaml", read("kustomization.yaml").replace(/newTag: \S+/, entry));
        write("settings.yaml", read("settings.yaml").replace(/release: \S+/, "release: 1.2.3"));
      });
      const job = next.find((o) => o.kind === "Job");
      expect(job.metadata.name).toBe("courier-tracking-migrate-1.2.3");
      expect(validJobName(job.metadata.name)).toBe(true);
      for (const w of next.filter((o) => podOf(o))) {
        const [ran] = podOf(w)!.spec.containers!.map((c: any) => c.image as string);
        expect(ran).toBe(image);
        expect(w.spec.template.metadata.labels["app.kubernetes.io/version"]).toBe("1.2.3");
      }
    });

  test.skipIf(!HAS_KUBECTL)("a new release renders a new Job, the same release the same one", () => {
    const next = renderEdited(({ read, write }) =>
      write("settings.yaml", read("settings.yaml").replace(/release: \S+/, "release: 1.4.2-rc.1")),
    );
    expect(next.find((o) => o.kind === "Job").metadata.name).toBe("courier-tracking-migrate-1.4.2-rc.1");
    expect(byKind("Job")[0].metadata.name).toBe(`courier-tracking-migrate-${pkg.version}`);
  });

  test("the release in settings.yaml and the image tag are the service's version (bun run release sets all three)", () => {
    const settings = Bun.YAML.parse(readFileSync(join(BASE, "settings.yaml"), "utf8")) as any;
    expect(settings.data.release).toBe(pkg.version);
    const k = Bun.YAML.parse(readFileSync(join(BASE, "kustomization.yaml"), "utf8")) as any;
    expect(k.images[0].newTag).toBe(pkg.version);
    expect(validJobName(`courier-tracking-migrate-${settings.data.release}`)).toBe(true);
    // The check can fail: a registry port in the name (the old name's mistake) or semver build metadata.
    expect(validJobName("courier-tracking-migrate-5000/courier-tracking")).toBe(false);
    expect(validJobName("courier-tracking-migrate-1.2.3+build.5")).toBe(false);
  });

  test("it runs the migration CLI, which serialises with the processes' own start-up migration (advisory lock)", () => {
    const job = byKind("Job")[0];
    expect(job.spec.template.spec.containers[0].command).toEqual(["bun", "run", "src/cli/migrate.ts"]);
    expect(readFileSync(join(ROOT, "src", "db", "migrate.ts"), "utf8")).toContain("pg_advisory_lock");
    // Not selected by the metrics Service or the NetworkPolicy's pods (it serves nothing).
    expect(job.spec.template.metadata.labels["app.kubernetes.io/name"]).toBeUndefined();
  });
});

describe("port 9090 stays internal; Prometheus scrapes it", () => {
  const [policy] = byKind("NetworkPolicy");
  const metricsService = byKind("Service").find((s) => s.metadata.name === "courier-tracking-metrics");
  const [monitor] = monitoring.filter((o) => o.kind === "ServiceMonitor");

  test("the NetworkPolicy selects the API and worker pods and admits 9090 only from the monitoring namespace or labelled pods", () => {
    for (const w of byKind("Deployment")) {
      const labels = w.spec.template.metadata.labels;
      for (const [k, v] of Object.entries(policy.spec.podSelector.matchLabels)) expect(labels[k]).toBe(v);
    }
    expect(policy.spec.policyTypes).toEqual(["Ingress"]);
    const rules = policy.spec.ingress as { ports: { port: number }[]; from?: any[] }[];
    const for9090 = rules.filter((r) => r.ports.some((p) => p.port === 9090));
    expect(for9090.length).toBe(1);
    expect(for9090[0]!.from).toEqual([
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } },
      { podSelector: { matchLabels: { "courier-tracking.example.com/metrics-client": "true" } } },
    ]);
    // The rule without `from` (open to the cluster) is the public port only.
    for (const r of rules.filter((r) => !r.from)) expect(r.ports.map((p) => p.port)).toEqual([8443]);
  });

  test("the ServiceMonitor scrapes the internal port's /metrics through the metrics Service, which selects API and worker pods", () => {
    for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels))
      expect(metricsService.metadata.labels[k]).toBe(v);
    expect(monitor.spec.endpoints).toHaveLength(1);
    const ep = monitor.spec.endpoints[0];
    expect([ep.port, ep.path, ep.scheme]).toEqual(["admin", "/metrics", "http"]);
    const port = metricsService.spec.ports.find((p: any) => p.name === ep.port);
    expect(port.port).toBe(9090);
    const configMap = byKind("ConfigMap")[0];
    expect(configMap.data.ADMIN_PORT).toBe("9090");
    for (const w of byKind("Deployment")) {
      const labels = w.spec.template.metadata.labels;
      for (const [k, v] of Object.entries(metricsService.spec.selector)) expect(labels[k]).toBe(v);
      expect(w.spec.template.spec.containers[0].ports.find((p: any) => p.name === port.targetPort).containerPort).toBe(
        9090,
      );
    }
    // No token on the internal port (src/modules/health/admin-server.ts), so the ServiceMonitor carries none.
    expect(ep.authorization ?? ep.bearerTokenSecret).toBeUndefined();
  });
});

describe("network policies (settings.yaml's namespaces), the database CA, the spans' resource", () => {
  const [policy] = byKind("NetworkPolicy");
  const rules = policy.spec.ingress as { ports: { port: number }[]; from: any[] }[];
  const namespaces = (from: any[]) => from.map((f) => f.namespaceSelector?.matchLabels["kubernetes.io/metadata.name"]);

  test.skipIf(!kustomized)(
    "the public port admits only the Ingress controller's namespace and monitoring; every rule names its sources",
    () => {
      const public8443 = rules.filter((r) => r.ports.some((p) => p.port === 8443));
      expect(public8443).toHaveLength(1);
      expect(namespaces(public8443[0]!.from)).toEqual(["ingress-nginx", "monitoring"]);
      expect(rules.every((r) => Array.isArray(r.from) && r.from.length > 0)).toBe(true);
    },
  );

  test.skipIf(!HAS_KUBECTL)("the namespaces are settings: another controller and monitoring namespace render", () => {
    const next = renderEdited(({ read, write }) =>
      write(
        "settings.yaml",
        read("settings.yaml")
          .replace(/ingressNamespace: \S+/, "ingressNamespace: traefik")
          .replace(/monitoringNamespace: \S+/, "monitoringNamespace: observability"),
      ),
    );
    const p = next.find((o) => o.kind === "NetworkPolicy");
    expect(p.spec.ingress.map((r: any) => namespaces(r.from))).toEqual([
      ["traefik", "observability"],
      ["observability", undefined],
    ]);
    // settings.yaml itself is never applied (local-config).
    expect(next.some((o) => o.metadata.name === "courier-tracking-settings")).toBe(false);
  });

  test.skipIf(!HAS_KUBECTL)(
    "the egress component: DNS, PostgreSQL, HTTPS to public addresses, SMTP, OTLP; valid",
    async () => {
      const next = renderEdited(({ read, write }) =>
        write("kustomization.yaml", `${read("kustomization.yaml")}components:\n  - egress\n`),
      );
      const egress = next.find((o) => o.kind === "NetworkPolicy" && o.metadata.name === "courier-tracking-egress");
      const Model = await modelOf(egress);
      new Model(egress).validate();
      expect(egress.spec.policyTypes).toEqual(["Egress"]);
      expect(egress.spec.podSelector).toEqual(policy.spec.podSelector);
      const ports = egress.spec.egress.map((r: any) => r.ports.map((p: any) => `${p.protocol}/${p.port}`).join(" "));
      expect(ports).toEqual(["UDP/53 TCP/53", "TCP/5432", "TCP/443", "TCP/587 TCP/465", "TCP/4318"]);
      expect(egress.spec.egress[1].to[0].ipBlock.cidr).toBe("10.0.0.0/8");
      expect(egress.spec.egress[4].to[0].namespaceSelector.matchLabels["kubernetes.io/metadata.name"]).toBe(
        "observability",
      );
      // Couriers and receivers: public addresses only, as the service's own address check (docs/webhooks.md).
      expect(egress.spec.egress[2].to[0].ipBlock.except).toContain("10.0.0.0/8");
      expect(egress.spec.egress[2].to[0].ipBlock.except).toContain("169.254.0.0/16");
    },
  );

  test("every pod mounts the database CA from its Secret, read-only, where PGSSLROOTCERT points", () => {
    const configMap = byKind("ConfigMap")[0];
    for (const w of workloads) {
      const pod = w.spec.template.spec;
      const volume = pod.volumes.find((v: any) => v.secret?.secretName === "courier-tracking-db-ca");
      expect([w.metadata.name, volume?.secret.optional]).toEqual([w.metadata.name, true]);
      const mount = pod.containers[0].volumeMounts.find((m: any) => m.name === volume.name);
      expect([mount.readOnly, configMap.data.PGSSLROOTCERT.startsWith(`${mount.mountPath}/`)]).toEqual([true, true]);
    }
  });

  test.skipIf(!kustomized)(
    "API and worker pods describe themselves to the collector (OTEL_RESOURCE_ATTRIBUTES from the Downward API)",
    () => {
      for (const d of byKind("Deployment")) {
        const env = d.spec.template.spec.containers[0].env as { name: string; value?: string; valueFrom?: any }[];
        const attrs = env.find((e) => e.name === "OTEL_RESOURCE_ATTRIBUTES")!.value!;
        expect(attrs).toContain(`k8s.deployment.name=${d.metadata.name}`);
        for (const ref of attrs.matchAll(/\$\(([A-Z_]+)\)/g))
          expect([
            ref[1],
            env.findIndex((e) => e.name === ref[1]) < env.findIndex((e) => e.name === "OTEL_RESOURCE_ATTRIBUTES"),
          ]).toEqual([ref[1], true]);
        expect(env.find((e) => e.name === "POD_NAME")!.valueFrom.fieldRef.fieldPath).toBe("metadata.name");
        expect(d.spec.template.metadata.labels["app.kubernetes.io/version"]).toBe(pkg.version);
      }
    },
  );
});
