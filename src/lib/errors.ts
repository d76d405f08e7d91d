/** Errors as values of one closed union (spec: Errors); the one `onError` (http/core.ts) renders them. */
import { Type as T } from "@sinclair/typebox";
import { literalUnion } from "./literal-union.ts";

export const CODE_STATUS = {
  INVALID_API_KEY: 401,
  QUOTA_EXCEEDED: 402,
  ACCOUNT_NEEDS_ATTENTION: 402,
  PLAN_UPGRADE_REQUIRED: 403,
  COURIER_NOT_FOUND: 404,
  TRACKING_NOT_FOUND: 404,
  WEBHOOK_NOT_FOUND: 404,
  SHIPMENT_NOT_FOLLOWED: 404,
  DELIVERY_NOT_FOUND: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  COURIER_NOT_SUPPORTED: 400,
  INVALID_TRACKING_NUMBER: 400,
  COURIER_AMBIGUOUS: 400,
  HTTPS_REQUIRED: 400,
  BAD_REQUEST: 400,
  WEBHOOK_IS_LIVE: 409,
  WEBHOOK_LIMIT_REACHED: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  /** An NDR action the shipment's state or the courier's status code rules out (docs/ndr-actions.md); `rule` names it. */
  ACTION_NOT_ELIGIBLE: 409,
  /** An NDR action of this account on this shipment is still awaiting the courier's answer. */
  ACTION_IN_PROGRESS: 409,
  /** Sandbox advance of a shipment another account follows too (docs/spec-map.md#sandbox). */
  SANDBOX_SHIPMENT_SHARED: 409,
  /** The request body did not arrive within BODY_TIMEOUT_MS (docs/deployment.md, Request bodies). */
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  DEMO_RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
  /** The courier's lookup queue is full: a lookup could not be answered in time; see Retry-After. */
  COURIER_BUSY: 503,
  TEST_WEBHOOKS_DISABLED: 503,
  TIMEOUT: 504,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof CODE_STATUS;
export const ERROR_CODES = Object.keys(CODE_STATUS) as ErrorCode[];

/** Extra fields allowed beside `code` and `message` (spec: COURIER_NOT_FOUND may carry did_you_mean). */
export interface ErrorExtra {
  did_you_mean?: string;
  /** Only on COURIER_AMBIGUOUS: the slugs whose formats fit the number (docs/shipments.md, courier=auto). */
  candidates?: string[];
  /** Only on ACTION_* refusals: the eligibility rule that refused (docs/ndr-actions.md). */
  rule?: string;
}

/** A failure a client can be told about. `headers` are added to the response (e.g. Retry-After). */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: ErrorExtra = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "AppError";
    this.status = CODE_STATUS[code];
  }
}

export interface ErrorBody {
  success: false;
  error: { code: ErrorCode; message: string } & ErrorExtra;
}

export function errorBody(code: ErrorCode, message: string, extra: ErrorExtra = {}): ErrorBody {
  return { success: false, error: { code, message, ...extra } };
}

/** One problem of a 422 (spec: Resources, Validation error; pydantic-v2 vocabulary for `type`, docs/spec-map.md, "Decisions"). */
export interface ValidationItem {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** Thrown by services for validation that schemas cannot express (e.g. URL host rules). */
export class RequestValidationError extends Error {
  constructor(readonly items: ValidationItem[]) {
    super("validation failed");
    this.name = "RequestValidationError";
  }
}

/** The error envelope (spec: "Errors"). */
export const ErrorSchema = T.Object(
  {
    success: T.Literal(false),
    error: T.Object({
      code: literalUnion(ERROR_CODES, {
        description: "Machine-readable error code; each operation's responses name the ones it can give.",
      }),
      message: T.String(),
      did_you_mean: T.Optional(T.String({ description: "Only on COURIER_NOT_FOUND, when one slug is clearly meant." })),
      candidates: T.Optional(
        T.Array(T.String(), { description: "Only on COURIER_AMBIGUOUS: the courier slugs the number fits." }),
      ),
      rule: T.Optional(
        T.String({
          description: "Only on ACTION_NOT_ELIGIBLE and ACTION_IN_PROGRESS: the eligibility rule that refused.",
        }),
      ),
    }),
  },
  { title: "Error" },
);

/** The 422 body (spec: "Validation error (HTTP 422)"). */
export const ValidationErrorSchema = T.Object(
  {
    detail: T.Array(
      T.Object({
        loc: T.Array(T.Union([T.String(), T.Integer()])),
        msg: T.String(),
        type: T.String({ examples: ["missing"] }),
      }),
    ),
  },
  { title: "ValidationError" },
);

/** The error envelope of one response, `code` the literal union of the codes it can carry (read by the OpenAPI document). */
function errorResponse(description: string, codes: readonly [ErrorCode, ...ErrorCode[]]) {
  const { code: _all, ...rest } = ErrorSchema.properties.error.properties;
  return T.Object(
    { success: T.Literal(false), error: T.Object({ code: literalUnion(codes), ...rest }) },
    { description },
  );
}

/** Response schemas for error statuses, to spread into a route's `response`. */
export const errorResponses = {
  common: {
    422: T.Object(ValidationErrorSchema.properties, { description: "Validation error.", title: "ValidationError" }),
    500: errorResponse("Unexpected error; quote X-Request-Id to support.", ["INTERNAL_ERROR"]),
    503: errorResponse("Temporarily unavailable; retry.", ["SERVICE_UNAVAILABLE"]),
  },
  authed: {
    401: errorResponse("Missing or invalid X-API-Key.", ["INVALID_API_KEY"]),
    429: errorResponse("Per-minute rate limit exceeded; see Retry-After.", ["RATE_LIMITED"]),
  },
  errorResponse,
};
