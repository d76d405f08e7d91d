/**
 * Probes on the public port: `/healthz` (the process answers) and `/readyz`
 * (service.ts: database reachable, migrations at head, not draining; else
 * 503 SERVICE_UNAVAILABLE). Both need no key and answer whatever
 * `X-Forwarded-Proto` says (the HTTPS check in http/core.ts exempts
 * {@link isProbeRequest}), so a TLS-terminating proxy, a container health
 * check and a Kubernetes httpGet probe all reach them over plain HTTP. The
 * internal port (admin-server.ts) serves the same answers.
 */
import { Elysia, t } from "elysia";
import type { CoreDeps } from "../../core-deps.ts";
import { AppError, errorResponses } from "../../errors.ts";
import { createReadiness, READINESS_MESSAGE } from "./service.ts";
import { createLifecycle, type Lifecycle } from "./state.ts";

export { isProbeRequest } from "./state.ts";

export function healthModule(deps: Pick<CoreDeps, "db"> & { lifecycle?: Lifecycle }) {
  const Ok = t.Object({ status: t.Literal("ok") });
  const readiness = createReadiness(deps.db.$client, deps.lifecycle ?? createLifecycle());
  return new Elysia({ detail: { hide: true } })
    .get("/healthz", () => ({ status: "ok" as const }), { response: { 200: Ok }, detail: { operationId: "healthz", hide: true } })
    .get(
      "/readyz",
      async () => {
        const r = await readiness();
        if (!r.ready) throw new AppError("SERVICE_UNAVAILABLE", READINESS_MESSAGE[r.reason!], {}, { "retry-after": "5" });
        return { status: "ok" as const };
      },
      { response: { 200: Ok, ...errorResponses.common }, detail: { operationId: "readyz", hide: true } },
    );
}
