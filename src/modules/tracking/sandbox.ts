/** `POST /v1/sandbox/.../advance` (docs/spec-map.md#sandbox): only with `COURIER_MODE=sandbox`, else 404 and undocumented. */
import { Elysia, t } from "elysia";
import type { AppDeps } from "../../deps.ts";
import { errorResponses } from "../../errors.ts";
import { authPlugin } from "../../http/auth.ts";
import { Text } from "../../http/text.ts";
import { URL_TOKEN_PATTERN } from "../../http/validation.ts";
import { Type as T } from "@sinclair/typebox";
import { TrackingDataSchema } from "./model.ts";
import { trackErrors } from "./index.ts";
import { schemaModels } from "../../http/models.ts";
import { advanceSandboxForAccount } from "./service.ts";

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
      ({ auth, params }) => advanceSandboxForAccount(deps, auth, params.courier, params.tracking_number),
      {
        apiKey: true,
        params: AdvanceParams,
        response: {
          200: "SandboxAdvanceResponse",
          ...errorResponses.authed,
          ...errorResponses.common,
          ...trackErrors,
          404: e(
            "Unknown courier slug, a courier the simulator does not answer, or the courier has no record of the number.",
            ["COURIER_NOT_FOUND", "NOT_FOUND", "TRACKING_NOT_FOUND"],
          ),
        },
        detail: {
          operationId: "advanceSandboxShipment",
          summary: "Move a sandbox shipment to its next state (sandbox only)",
          tags: ["Tracking"],
          description:
            "Sandbox mode only (absent in live mode). Moves the simulated shipment to its next scripted state now, then re-checks it at once through the normal path: the change is stored, its event written and webhooks delivered exactly as a scheduled re-check would. Answers the new tracking data (the same `data` as GET /v1/track); a shipment with no scripted state left is answered as it is. Your account follows the shipment, as after a lookup. Not counted against the quota.",
        },
      },
    );
}
