/** Courier, simulator and re-check variables of config-env.ts's schema. */
import { Type as T } from "@sinclair/typebox";
import { RECHECK_INTERVAL_SECONDS } from "../domain/following.ts";
import { ASYNC_LOOKUP_BUDGET_MS } from "../domain/limits.ts";
import { Int, OneOf, Port } from "./env-kinds.ts";

const SPEC_RECHECK_INTERVAL_SECONDS = RECHECK_INTERVAL_SECONDS;
const SPEC_ASYNC_BUDGET_MS = ASYNC_LOOKUP_BUDGET_MS;

export const COURIER_ENV = {
  COURIER_MODE: T.Optional(
    OneOf(["sandbox", "live"], {
      "x-default": "`live` with `DATABASE_URL` or courier credentials, else `sandbox`",
      description:
        "`sandbox`: couriers without credentials answer from the built-in simulator and a development account is created. `live`: couriers without credentials are unavailable.",
    }),
  ),
  SANDBOX_STEP_SECONDS: Int({
    default: 3600,
    description: "Simulator: seconds between the scripted status steps of a sandbox shipment.",
  }),
  SANDBOX_ASYNC_SECONDS: Int({
    default: 12,
    description: "Simulator: seconds the asynchronous (aggregator) path takes to answer.",
  }),
  SANDBOX_PORT: Port({ default: 0, description: "Simulator: loopback port (`0`: any free port)." }),
  SANDBOX_DEGRADE: T.Array(T.String({ pattern: "^[a-z0-9]+:[0-9]{1,3}:[0-9]{1,6}$" }), {
    default: [],
    "x-pattern": "^([a-z0-9]+:[0-9]{1,3}:[0-9]{1,6}(,[a-z0-9]+:[0-9]{1,3}:[0-9]{1,6})*)?$",
    "x-expected": "comma-separated backend:failPercent:delayMs entries (e.g. delhivery:30:2500)",
    description:
      'Simulator: make a courier twin degrade, to see courier health end to end (docs/courier-health.md, "Sandbox"): the given percent of its answers fail with HTTP 503 and every answer waits delayMs first. Backends are the folder names under `src/modules/couriers/carriers/`.',
  }),
  COURIER_TIMEOUT_MS: Int({ default: 10_000, description: "Timeout of one synchronous courier request, ms." }),
  COURIER_ASYNC_BUDGET_MS: Int({
    default: SPEC_ASYNC_BUDGET_MS,
    description: "Total budget of an asynchronous (register and poll) courier lookup, ms.",
  }),
  COURIER_CONCURRENCY: Int({
    default: 32,
    description: "Courier calls in flight per courier and process; further calls queue.",
  }),
  COURIER_QUEUE_LIMIT: T.Optional(
    Int({
      "x-default": "4 × `COURIER_CONCURRENCY`",
      description:
        "Lookups waiting per courier and process beyond those in flight. Past it, or when a lookup could not start within its budget, the answer is 503 `COURIER_BUSY` with `Retry-After` at once.",
    }),
  ),
  COURIER_RATE_LIMITS: T.Array(T.String({ pattern: "^[a-z0-9]+:[0-9]+(\\.[0-9]+)?:[0-9]+$" }), {
    default: [],
    "x-pattern": "^([a-z0-9]+:[0-9]+(\\.[0-9]+)?:[0-9]+(,[a-z0-9]+:[0-9]+(\\.[0-9]+)?:[0-9]+)*)?$",
    "x-expected": "comma-separated backend:perSecond:perDay entries (e.g. dhl:0.2:250; perDay 0 means no daily limit)",
    description:
      'Courier call budgets shared by every process on the database, per courier backend (the folder names under `src/modules/couriers/carriers/`) and credential: calls per second (decimals allowed) and per UTC day (`0`: none). Replaces the backend\'s published default (docs/capacity.md, "Courier rate budgets"); a listed backend is budgeted in sandbox mode too.',
  }),
  COURIER_LIVE_RESERVE_PERCENT: Int({
    default: 20,
    maximum: 90,
    description:
      "Share of each courier budget (per second and per day) that only live `/v1/track` lookups may use; re-checks are paced to the rest.",
  }),
  RECHECK_INTERVAL_SECONDS: Int({
    default: SPEC_RECHECK_INTERVAL_SECONDS,
    description:
      "Interval between re-checks of a followed shipment (± 10 % jitter). Set it the same on every process: API processes schedule the first re-check.",
  }),
  TERMINAL_REUSE_SECONDS: Int({
    default: 300,
    description:
      'A delivered, returned or cancelled shipment that this process fetched from the courier less than this many seconds ago is answered from that fetch, without calling the courier again (`FetchTime` "0.000"); `0` calls the courier on every lookup (docs/shipments.md, Lookups of finished shipments).',
  }),
};
