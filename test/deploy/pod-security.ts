/**
 * The Pod Security Standards, "baseline" and "restricted" levels, as checks over a workload object
 * (Pod, Deployment, Job, …: anything with a pod template), written from the published rule list:
 * https://kubernetes.io/docs/concepts/security/pod-security-standards/ (policy version v1.32).
 * One entry per row of the standard's tables; each returns the violations it finds, as
 * `<rule>: <where>` lines. Windows-only fields are out of scope (our pods are Linux pods).
 */

export type Level = "baseline" | "restricted";

interface Container {
  name?: string;
  securityContext?: Record<string, any>;
  ports?: { hostPort?: number }[];
}
interface PodSpec {
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  securityContext?: Record<string, any>;
  volumes?: Record<string, any>[];
  containers?: Container[];
  initContainers?: Container[];
  ephemeralContainers?: Container[];
}
interface PodView {
  spec: PodSpec;
  annotations: Record<string, string>;
}

export interface Rule {
  id: string;
  level: Level;
  check(pod: PodView): string[];
}

/** Baseline "Capabilities": the only capabilities that may be added. */
const BASELINE_CAPABILITIES = new Set([
  "AUDIT_WRITE",
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "FSETID",
  "KILL",
  "MKNOD",
  "NET_BIND_SERVICE",
  "SETFCAP",
  "SETGID",
  "SETPCAP",
  "SETUID",
  "SYS_CHROOT",
]);
/** Baseline "Sysctls": the safe set. */
const SAFE_SYSCTLS = new Set([
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
]);
/** Baseline "SELinux": allowed `seLinuxOptions.type` values (unset is allowed too). */
const SELINUX_TYPES = new Set(["container_t", "container_init_t", "container_kvm_t", "container_engine_t"]);
/** Restricted "Volume Types": the only volume sources allowed. */
const RESTRICTED_VOLUMES = new Set([
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
]);

function containersOf(spec: PodSpec): { where: string; c: Container }[] {
  return (["containers", "initContainers", "ephemeralContainers"] as const).flatMap((k) =>
    (spec[k] ?? []).map((c, i) => ({ where: `${k}[${c.name ?? i}]`, c })),
  );
}
const sc = (c: Container) => c.securityContext ?? {};

/** Every rule of both levels; a "restricted" check applies the baseline rules too. */
export const RULES: Rule[] = [
  // ---- baseline ----
  {
    id: "HostProcess",
    level: "baseline",
    check: ({ spec }) => [
      ...(spec.securityContext?.windowsOptions?.hostProcess ? ["pod"] : []),
      ...containersOf(spec)
        .filter(({ c }) => sc(c).windowsOptions?.hostProcess)
        .map(({ where }) => where),
    ],
  },
  {
    id: "Host Namespaces",
    level: "baseline",
    check: ({ spec }) => (["hostNetwork", "hostPID", "hostIPC"] as const).filter((k) => spec[k]).map((k) => `pod.${k}`),
  },
  {
    id: "Privileged Containers",
    level: "baseline",
    check: ({ spec }) =>
      containersOf(spec)
        .filter(({ c }) => sc(c).privileged)
        .map(({ where }) => where),
  },
  {
    id: "Capabilities (baseline)",
    level: "baseline",
    check: ({ spec }) =>
      containersOf(spec).flatMap(({ where, c }) =>
        ((sc(c).capabilities?.add ?? []) as string[])
          .filter((cap) => !BASELINE_CAPABILITIES.has(cap))
          .map((cap) => `${where} adds ${cap}`),
      ),
  },
  {
    id: "HostPath Volumes",
    level: "baseline",
    check: ({ spec }) => (spec.volumes ?? []).filter((v) => v.hostPath).map((v) => `volume ${v.name}`),
  },
  {
    id: "Host Ports",
    level: "baseline",
    check: ({ spec }) =>
      containersOf(spec).flatMap(({ where, c }) =>
        (c.ports ?? []).filter((p) => p.hostPort).map((p) => `${where} hostPort ${p.hostPort}`),
      ),
  },
  {
    id: "AppArmor",
    level: "baseline",
    check: ({ spec, annotations }) => {
      const ok = (p: any) => p === undefined || p.type === "RuntimeDefault" || p.type === "Localhost";
      return [
        ...(ok(spec.securityContext?.appArmorProfile) ? [] : ["pod"]),
        ...containersOf(spec)
          .filter(({ c }) => !ok(sc(c).appArmorProfile))
          .map(({ where }) => where),
        ...Object.entries(annotations)
          .filter(
            ([k, v]) =>
              k.startsWith("container.apparmor.security.beta.kubernetes.io/") &&
              v !== "runtime/default" &&
              !v.startsWith("localhost/"),
          )
          .map(([k]) => `annotation ${k}`),
      ];
    },
  },
  {
    id: "SELinux",
    level: "baseline",
    check: ({ spec }) => {
      const bad = (o: any) =>
        o !== undefined &&
        ((o.type !== undefined && !SELINUX_TYPES.has(o.type)) || o.user !== undefined || o.role !== undefined);
      return [
        ...(bad(spec.securityContext?.seLinuxOptions) ? ["pod"] : []),
        ...containersOf(spec)
          .filter(({ c }) => bad(sc(c).seLinuxOptions))
          .map(({ where }) => where),
      ];
    },
  },
  {
    id: "/proc Mount Type",
    level: "baseline",
    check: ({ spec }) =>
      containersOf(spec)
        .filter(({ c }) => sc(c).procMount !== undefined && sc(c).procMount !== "Default")
        .map(({ where }) => where),
  },
  {
    id: "Seccomp (baseline)",
    level: "baseline",
    check: ({ spec }) => [
      ...(spec.securityContext?.seccompProfile?.type === "Unconfined" ? ["pod"] : []),
      ...containersOf(spec)
        .filter(({ c }) => sc(c).seccompProfile?.type === "Unconfined")
        .map(({ where }) => where),
    ],
  },
  {
    id: "Sysctls",
    level: "baseline",
    check: ({ spec }) =>
      ((spec.securityContext?.sysctls ?? []) as { name: string }[])
        .filter((s) => !SAFE_SYSCTLS.has(s.name))
        .map((s) => `sysctl ${s.name}`),
  },
  // ---- restricted ----
  {
    id: "Volume Types",
    level: "restricted",
    check: ({ spec }) =>
      (spec.volumes ?? []).flatMap((v) => {
        const sources = Object.keys(v).filter((k) => k !== "name");
        return sources.filter((s) => !RESTRICTED_VOLUMES.has(s)).map((s) => `volume ${v.name} (${s})`);
      }),
  },
  {
    id: "Privilege Escalation",
    level: "restricted",
    check: ({ spec }) =>
      containersOf(spec)
        .filter(({ c }) => sc(c).allowPrivilegeEscalation !== false)
        .map(({ where }) => where),
  },
  {
    id: "Running as Non-root",
    level: "restricted",
    check: ({ spec }) => {
      const pod = spec.securityContext?.runAsNonRoot;
      return containersOf(spec)
        .filter(({ c }) => sc(c).runAsNonRoot === false || (sc(c).runAsNonRoot !== true && pod !== true))
        .map(({ where }) => where);
    },
  },
  {
    id: "Running as Non-root user",
    level: "restricted",
    check: ({ spec }) => [
      ...(spec.securityContext?.runAsUser === 0 ? ["pod"] : []),
      ...containersOf(spec)
        .filter(({ c }) => sc(c).runAsUser === 0)
        .map(({ where }) => where),
    ],
  },
  {
    id: "Seccomp (restricted)",
    level: "restricted",
    check: ({ spec }) => {
      const allowed = (t: unknown) => t === "RuntimeDefault" || t === "Localhost";
      const pod = spec.securityContext?.seccompProfile?.type;
      return [
        ...(pod !== undefined && !allowed(pod) ? ["pod"] : []),
        ...containersOf(spec)
          .filter(({ c }) => {
            const t = sc(c).seccompProfile?.type;
            return t === undefined ? !allowed(pod) : !allowed(t);
          })
          .map(({ where }) => where),
      ];
    },
  },
  {
    id: "Capabilities (restricted)",
    level: "restricted",
    check: ({ spec }) =>
      containersOf(spec).flatMap(({ where, c }) => {
        const caps = sc(c).capabilities ?? {};
        return [
          ...(((caps.drop ?? []) as string[]).includes("ALL") ? [] : [`${where} does not drop ALL`]),
          ...((caps.add ?? []) as string[])
            .filter((cap) => cap !== "NET_BIND_SERVICE")
            .map((cap) => `${where} adds ${cap}`),
        ];
      }),
  },
];

/** The pod spec and annotations of a workload object, or undefined for objects that carry no pod. */
export function podOf(obj: any): PodView | undefined {
  switch (obj?.kind) {
    case "Pod":
      return { spec: obj.spec ?? {}, annotations: obj.metadata?.annotations ?? {} };
    case "Deployment":
    case "StatefulSet":
    case "DaemonSet":
    case "ReplicaSet":
    case "Job":
      return { spec: obj.spec?.template?.spec ?? {}, annotations: obj.spec?.template?.metadata?.annotations ?? {} };
    case "CronJob":
      return {
        spec: obj.spec?.jobTemplate?.spec?.template?.spec ?? {},
        annotations: obj.spec?.jobTemplate?.spec?.template?.metadata?.annotations ?? {},
      };
    default:
      return undefined;
  }
}

/**
 * The violations of `obj` at `level` ("restricted" includes the baseline rules), as `<rule>: <where>` lines;
 * empty when it passes or carries no pod.
 */
export function podSecurityViolations(obj: unknown, level: Level): string[] {
  const pod = podOf(obj);
  if (!pod) return [];
  const rules = RULES.filter((r) => level === "restricted" || r.level === "baseline");
  return rules.flatMap((r) => r.check(pod).map((where) => `${r.id}: ${where}`));
}
