/** Probes on the public port, no key, answered over plain HTTP whatever `X-Forwarded-Proto` says. */
import { Elysia, t } from "elysia";
import type { CoreDeps } from "../../core-deps.ts";
import { AppError, errorResponses } from "../../lib/errors.ts";
import { createReadiness, READINESS_MESSAGE } from "./service.ts";
import { SERVICE_VERSION } from "../../lib/version.ts";
import { createLifecycle, type Lifecycle } from "./state.ts";

export function healthModule(deps: Pick<CoreDeps, "db"> & { lifecycle?: Lifecycle }) {
  const Ok = t.Object({ status: t.Literal("ok") });
  const Live = t.Object({ status: t.Literal("ok"), version: t.String() });
  const readiness = createReadiness(deps.db.$client, deps.lifecycle ?? createLifecycle());
  return new Elysia({ detail: { hide: true } })
    .get("/healthz", () => ({ status: "ok" as const, version: SERVICE_VERSION }), {
      response: { 200: Live },
      detail: { operationId: "healthz", hide: true },
    })
    .get(
      "/readyz",
      async () => {
        const r = await readiness();
        if (!r.ready)
          throw new AppError("SERVICE_UNAVAILABLE", READINESS_MESSAGE[r.reason], {}, { "retry-after": "5" });
        return { status: "ok" as const };
      },
      { response: { 200: Ok, ...errorResponses.common }, detail: { operationId: "readyz", hide: true } },
    );
}
