/** Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the database answers). */
import { sql } from "drizzle-orm";
import { Elysia, t } from "elysia";
import type { AppDeps } from "../../app.ts";
import { errorResponses } from "../../errors.ts";

export function healthModule(deps: Pick<AppDeps, "db">) {
  const Ok = t.Object({ status: t.Literal("ok") });
  return new Elysia({ detail: { hide: true } })
    .get("/healthz", () => ({ status: "ok" as const }), { response: { 200: Ok }, detail: { operationId: "healthz", hide: true } })
    .get(
      "/readyz",
      async () => {
        // Readiness fails (503 SERVICE_UNAVAILABLE via the core error handler) when the database does not answer.
        await deps.db.execute(sql`select 1`);
        return { status: "ok" as const };
      },
      { response: { 200: Ok, ...errorResponses.common }, detail: { operationId: "readyz", hide: true } },
    );
}
