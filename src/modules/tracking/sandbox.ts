/** `POST /v1/sandbox/.../advance` (docs/spec-map.md#sandbox): only with `COURIER_MODE=sandbox`, else 404 and undocumented. */
import { Elysia, t } from "elysia";
import type { AppDeps } from "../../deps.ts";
import { errorResponses } from "../../lib/errors.ts";
import { authPlugin } from "../../http/auth.ts";
import { Text } from "../../http/text.ts";
import { URL_TOKEN_PATTERN } from "../../http/validation.ts";
import { Type as T } from "@sinclair/typebox";
import { TrackingDataSchema } from "./model.ts";
import { trackErrors } from "./index.ts";
import { schemaModels } from "../../http/models.ts";
import { advanceSandboxForAccount } from "./service.ts";
import { idempotent } from "../../http/idempotency.ts";
import { limitAdvances, SANDBOX_ADVANCES_PER_MINUTE } from "./sandbox-guard.ts";

const e = errorResponses.errorResponse;

const AdvanceParams = t.Object({
  courier: Text({
    minLength: 1,
    maxLength: 64,
    pattern: URL_TOKEN_PATTERN,
    description: "Courier slug from GET /v1/couriers.",
  }),
  tracking_number: Text({
    minLength: 1,
    maxLength: 64,
    pattern: URL_TOKEN_PATTERN,
    description: "A sandbox tracking number (the last digit picks the scenario).",
  }),
});

const AdvanceResponse = T.Object(
  { success: T.Literal(true), data: TrackingDataSchema },
  {
    title: "SandboxAdvanceResponse",
    description: "The shipment's tracking data after the move (the `data` of GET /v1/track).",
  },
);

const sandboxModels = schemaModels("sandbox.models", { SandboxAdvanceResponse: AdvanceResponse });

/** The advance route (sandbox only; an empty plugin otherwise). */
export function sandboxAdvanceModule(deps: AppDeps) {
  const self = new Elysia({ name: "sandbox-advance" });
  if (deps.config.courierMode !== "sandbox") return self;
  return self
    .use(sandboxModels)
    .use(authPlugin(deps))
    .post(
      "/v1/sandbox/shipments/:courier/:tracking_number/advance",
      async (c) => {
        // Counted before the key is looked at, like the per-minute limit: a 429 is never an operation's answer.
        await limitAdvances(deps, c.auth.account.id);
        return idempotent(deps, c, () =>
          advanceSandboxForAccount(deps, c.auth, c.params.courier, c.params.tracking_number),
        );
      },
      {
        apiKey: true,
        params: AdvanceParams,
        response: {
          200: "SandboxAdvanceResponse",
          ...errorResponses.authed,
          ...errorResponses.common,
          ...trackErrors,
          404: e(
            "Unknown courier slug, a courier the simulator does not answer, a shipment your account does not follow, or the courier has no record of the number.",
            ["COURIER_NOT_FOUND", "NOT_FOUND", "SHIPMENT_NOT_FOLLOWED", "TRACKING_NOT_FOUND"],
          ),
          409: e("Another account follows this shipment too.", ["SANDBOX_SHIPMENT_SHARED"]),
          429: e(
            `Per-minute rate limit, or more than ${SANDBOX_ADVANCES_PER_MINUTE} sandbox advances this minute; see Retry-After.`,
            ["RATE_LIMITED"],
          ),
        },
        detail: {
          operationId: "advanceSandboxShipment",
          summary: "Move a sandbox shipment to its next state (sandbox only)",
          tags: ["Shipments"],
          description: `Sandbox mode only (absent in live mode). Moves a simulated shipment your account follows (after GET /v1/track or POST /v1/shipments) to its next scripted state now, then re-checks it at once through the normal path: the change is stored, its event written and your webhooks delivered exactly as a scheduled re-check would. Only shipments no other account follows: a shipment you do not follow is 404 SHIPMENT_NOT_FOLLOWED, one another account follows too 409 SANDBOX_SHIPMENT_SHARED, and neither moves. Answers the new tracking data (the same \`data\` as GET /v1/track); a shipment with no scripted state left is answered as it is. At most ${SANDBOX_ADVANCES_PER_MINUTE} advances a minute per account (429 RATE_LIMITED with Retry-After). Numbers ending in …991 revise the courier's EDD two days later at their first step, which sends \`tracking.eta_changed\`. Not counted against the quota.`,
        },
      },
    );
}
