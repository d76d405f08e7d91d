/** Process role, logs, traces, internal port and key-rotation variables of config-env.ts's schema. */
import { Type as T } from "@sinclair/typebox";
import { Int, OneOf, Port, SecretsKey, Text } from "./env-kinds.ts";

export const OPERATIONS_ENV = {
  ROLE: OneOf(["api", "worker", "all"], {
    default: "all",
    description:
      "`api` serves HTTP only; `worker` runs re-checks and webhook deliveries only (no public port); `all` both.",
  }),
  LOG_LEVEL: OneOf(["debug", "info", "warn", "error", "silent"], {
    default: "info",
    description:
      "`debug`, `info`, `warn`, `error` or `silent`. JSON lines on stdout, one access-log line per request at `info`.",
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: T.Optional(
    Text({
      pattern: "^https?://[^\\s]+$",
      "x-expected": "an http:// or https:// URL without spaces",
      "x-default": "unset (no traces, no tracing work)",
      description:
        "OpenTelemetry collector base URL; spans go to `<url>/v1/traces` as OTLP/HTTP JSON (docs/operations.md, Traces).",
    }),
  ),
  OTEL_SERVICE_NAME: Text({
    minLength: 1,
    default: "courier-tracking-api",
    description: "`service.name` of the spans sent to `OTEL_EXPORTER_OTLP_ENDPOINT`.",
  }),
  OTEL_RESOURCE_ATTRIBUTES: T.Optional(
    Text({
      pattern: "^[^=,\\s]+=[^,]*(,[^=,\\s]+=[^,]*)*$",
      "x-expected": "key=value pairs separated by commas (values percent-encoded)",
      "x-default": "unset (`service.version` is the service's version, `service.instance.id` a UUID per process)",
      description:
        "Resource attributes of the spans (OpenTelemetry's variable: `k8s.pod.name=…,deployment.environment=…`); they override the defaults, `OTEL_SERVICE_NAME` gives `service.name`.",
    }),
  ),
  // Operations: probes and metrics port, key checks, shutdown and start-up budgets (docs/deployment.md).
  ADMIN_PORT: T.Optional(
    Port({
      "x-default": "unset (no internal port)",
      description:
        "Internal plain-HTTP port serving `/healthz`, `/readyz` and `/metrics` without a key, in every role (a worker's only port). Keep it off the internet.",
    }),
  ),
  ADMIN_HOST: Text({
    minLength: 1,
    default: "127.0.0.1",
    description: "Address the internal port binds to (`0.0.0.0` in a pod, so the kubelet and Prometheus reach it).",
  }),
  METRICS_TOKEN: T.Optional(
    Text({
      minLength: 16,
      "x-default": "unset (`/metrics` not served on the public port)",
      description:
        "At least 16 characters; `/metrics` on the public port answers only `Authorization: Bearer <token>`.",
    }),
  ),
  SECRETS_KEY_PREVIOUS: SecretsKey({
    description:
      "The key before `SECRETS_KEY`, accepted for decryption only while rotating (see Rotating SECRETS_KEY).",
  }),
  SECRETS_KEY_GENERATE: T.Optional(
    OneOf(["single-node"], {
      description:
        "`single-node` allows a key generated into `DATA_DIR` with `DATABASE_URL` set (one process only); without it a deployment must set `SECRETS_KEY`.",
    }),
  ),
  SHUTDOWN_GRACE_SECONDS: Int({
    default: 30,
    description:
      "On SIGTERM: how long in-flight requests, re-checks and deliveries may take to finish before the process stops anyway.",
  }),
};
