/** Example values for the OpenAPI document (what Swagger UI and Postman prefill) and a sample message per error code. */
import type { ErrorCode } from "../lib/errors.ts";
import { planOf, PLANS } from "../domain/plans.ts";
import { COURIERS } from "../modules/couriers/catalogue.ts";
import { TRACK_EXAMPLE } from "../modules/tracking/model.ts";
import { EVENT_TYPES } from "../domain/events.ts";
import { MAX_WEBHOOKS } from "../modules/webhooks/service.ts";
import { defined } from "../lib/defined.ts";
import { DEMO_LIMIT_PER_HOUR } from "../domain/limits.ts";
import { MAX_BODY_BYTES } from "../http/body.ts";
import { DEFAULT_BODY_TIMEOUT_MS } from "../config/env.ts";

export const WH_ID = "wh_01937c1e5b8a7c4e9f3d2a1b0c9d8e7f";
const DLV_ID = "dlv_01937c2a9e4b7d1f8c6a5b4e3d2c1b0a";
const WEBHOOK = {
  id: WH_ID,
  url: "https://example.com/hooks/courier",
  events: ["tracking.delivered", "tracking.exception"],
  mode: "test",
  description: "Order updates",
  headers: {},
  status: "active",
  failure_count: 0,
  created_at: "2026-11-05T10:00:00.000Z",
  updated_at: "2026-11-05T10:00:00.000Z",
};
const courier = (slug: string) =>
  defined(
    COURIERS.find((c) => c.slug === slug),
    `courier ${slug}`,
  );
const view = (slug: string) => ({
  slug,
  name: courier(slug).name,
  available: true,
  sandbox: false,
  actions: slug === "delhivery" ? ["reattempt", "defer_delivery", "update_consignee", "return_to_origin"] : [],
  rate_budget:
    slug === "delhivery"
      ? { per_second: 2, per_day: null, covers_followed: true }
      : { per_second: 5, per_day: null, covers_followed: true },
  health:
    slug === "delhivery"
      ? { state: "degraded", since: "2026-11-05T13:10:00Z", success_share_15m: 0.82, p95_ms_15m: 4800 }
      : { state: "operational", since: "2026-11-04T08:00:00Z", success_share_15m: 0.998, p95_ms_15m: 900 },
});
const healthWindow = (calls: number, success: number, p95: number) => ({
  calls,
  success_share: success,
  shares: {
    ok: Math.round((success - 0.02) * 10_000) / 10_000,
    not_found: 0.02,
    timeout: Math.round((1 - success) * 10_000) / 10_000,
    server_error: 0,
    rate_limited: 0,
    malformed: 0,
    other: 0,
  },
  p50_ms: 420,
  p95_ms: p95,
});
const HEALTH_EXAMPLE = {
  courier: "delhivery",
  name: "Delhivery",
  state: "degraded",
  since: "2026-11-05T13:10:00Z",
  evaluated_at: "2026-11-05T13:30:30Z",
  window_minutes: 10,
  current: healthWindow(240, 0.8, 4800),
  windows: {
    "15m": healthWindow(355, 0.82, 4800),
    "1h": healthWindow(1410, 0.93, 3900),
    "24h": healthWindow(33_800, 0.99, 1100),
  },
  baseline_p95_ms: 850,
  oldest_due_recheck_age_s: 540,
  incident: {
    id: "inc_01937c2a9e4b7d1f8c6a5b4e3d2c1b0c",
    courier: "delhivery",
    state: "degraded",
    started_at: "2026-11-05T13:10:00Z",
    ended_at: null,
    transitions: [
      {
        at: "2026-11-05T13:10:00Z",
        state: "degraded",
        event: "courier.degraded",
        event_id: "evt_01937c2a9e4b7d1f8c6a5b4e3d2c1b0d",
        figures: healthWindow(238, 0.81, 4700),
      },
    ],
  },
};

/** Per operationId: parameter values, request body and success body examples (what Swagger UI and Postman prefill). */
export const OPERATION_EXAMPLES: Record<
  string,
  { params?: Record<string, string | number | boolean>; body?: unknown; ok?: unknown }
> = {
  trackShipment: {
    params: { courier: "delhivery", tracking_number: courier("delhivery").awb.example },
    ok: TRACK_EXAMPLE,
  },
  advanceSandboxShipment: {
    params: { courier: "delhivery", tracking_number: "1234567890121" },
    ok: { success: true, data: TRACK_EXAMPLE.data },
  },
  demoTrack: {
    params: { courier: "dhl", tracking_number: "1234567890" },
    ok: { success: true, data: TRACK_EXAMPLE.data },
  },
  listCouriers: { ok: { success: true, data: { couriers: ["delhivery", "bluedart", "dhl"].map(view), count: 3 } } },
  detectCourier: {
    params: { tracking_number: courier("delhivery").awb.example },
    ok: { success: true, data: { couriers: [view("delhivery")], count: 1 } },
  },
  getCourier: { params: { slug: "delhivery" }, ok: { success: true, data: view("delhivery") } },
  getCourierHealth: { params: { slug: "delhivery" }, ok: { success: true, data: HEALTH_EXAMPLE } },
  getEstimates: {
    params: { origin: "400001", destination: "560001", courier: "delhivery", ship_date: "2026-11-30" },
    ok: {
      success: true,
      data: {
        origin: { kind: "pincode", value: "400001" },
        destination: { kind: "pincode", value: "560001" },
        ship_date: "2026-11-30",
        estimates: [
          {
            courier: "delhivery",
            date: "2026-12-03",
            earliest: "2026-12-02",
            latest: "2026-12-05",
            pickup_date: "2026-11-30",
            basis: "pincode_lane",
            sample_size: 412,
          },
        ],
        count: 1,
      },
    },
  },
  listPlans: { ok: { success: true, data: { plans: PLANS, count: PLANS.length } } },
  createWebhook: {
    body: { url: WEBHOOK.url, events: WEBHOOK.events, mode: "test", description: WEBHOOK.description },
    ok: { success: true, data: { ...WEBHOOK, secret: "whsec_3q2-7wEAAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRo" } },
  },
  listWebhooks: { ok: { success: true, data: { webhooks: [WEBHOOK], count: 1 } } },
  rotateWebhookSecret: { ok: { success: true, data: { secret: "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8" } } },
  getWebhook: { params: { webhook_id: WH_ID }, ok: { success: true, data: WEBHOOK } },
  updateWebhook: {
    params: { webhook_id: WH_ID },
    body: { description: "Order updates (all events)", events: [...EVENT_TYPES] },
    ok: { success: true, data: { ...WEBHOOK, events: [...EVENT_TYPES] } },
  },
  deleteWebhook: { params: { webhook_id: WH_ID } },
  testWebhook: {
    params: { webhook_id: WH_ID },
    body: { event: "tracking.delivered" },
    ok: { success: true, data: { delivered: true, status_code: 200, attempt_ms: 84 } },
  },
  auditWebhookReceiver: {
    params: { webhook_id: WH_ID },
    ok: {
      success: true,
      data: {
        verdict: "failed",
        cases: [
          { case: "valid", status: 200, verdict: "pass", error: null },
          { case: "wrong_signature", status: 401, verdict: "pass", error: null },
          { case: "stale_timestamp", status: 200, verdict: "fail", error: null },
          { case: "no_signature", status: 401, verdict: "pass", error: null },
        ],
        guide: "docs/webhook-receivers.md",
      },
    },
  },
  listWebhookDeliveries: {
    params: {
      webhook_id: WH_ID,
      limit: 20,
      cursor: "dlv_01937c2a9e4b7d1f8c6a5b4e3d2c1b0a",
      status: "delivered",
      event_type: "tracking.delivered",
      since: "2026-11-01T00:00:00Z",
      until: "2026-12-01T00:00:00Z",
      after_sequence: 41,
    },
    ok: {
      success: true,
      data: {
        deliveries: [
          {
            id: "dlv_01937c2a9e4b7d1f8c6a5b4e3d2c1b0a",
            event: "tracking.delivered",
            event_id: "evt_01937c2a9e4b7d1f8c6a5b4e3d2c1b0b",
            event_type: "tracking.delivered",
            sequence: 42,
            mode: "live",
            state: "delivered",
            attempts: 1,
            enqueued_at: "2026-11-05T10:01:00.000Z",
            next_attempt_at: null,
            last_status_code: 200,
            last_error: null,
            created_at: "2026-11-05T10:01:00.000Z",
            attempt_log: [
              {
                attempt: 1,
                url: WEBHOOK.url,
                started_at: "2026-11-05T10:01:00.120Z",
                duration_ms: 84,
                status_code: 200,
                error: null,
                response_snippet: "ok",
              },
            ],
          },
        ],
        count: 1,
        next_cursor: null,
      },
    },
  },
};

/** A sample message per error code for the example inputs above; links point at `publicBaseUrl`. */
export function errorMessages(publicBaseUrl: string): Record<ErrorCode, string> {
  const free = planOf("free");
  const delhivery = courier("delhivery");
  return {
    INVALID_API_KEY: "The API key is invalid or has been revoked.",
    QUOTA_EXCEEDED: `Monthly quota of ${free.monthly_quota} tracking requests used up on the ${free.name} plan. Upgrade at ${publicBaseUrl}/dashboard/billing`,
    ACCOUNT_NEEDS_ATTENTION: "This account needs attention; contact support to restore tracking.",
    PLAN_UPGRADE_REQUIRED: `Live webhooks need a plan that includes them (Growth or Business); the ${free.name} plan has test webhooks only.`,
    COURIER_NOT_FOUND:
      'Unknown courier "delhivry". Did you mean "delhivery"? GET /v1/couriers lists the supported slugs.',
    TRACKING_NOT_FOUND: `${delhivery.name} has no record of this tracking number.`,
    WEBHOOK_NOT_FOUND: `No webhook with id "${WH_ID}" on this account.`,
    SHIPMENT_NOT_FOLLOWED: `This account does not follow delhivery ${delhivery.awb.example}; follow it with POST /v1/shipments or GET /v1/track.`,
    DELIVERY_NOT_FOUND: `No delivery with id "${DLV_ID}" on this webhook.`,
    COURIER_AMBIGUOUS:
      "This number fits 3 couriers' formats (bluedart, dtdc, ecomexpress); pass one of them as courier instead of auto.",
    IDEMPOTENCY_IN_PROGRESS: "A request with this Idempotency-Key is still being processed; retry shortly.",
    ACTION_NOT_ELIGIBLE:
      "Rule status_code: the courier accepts reattempt only after status EOD-74, EOD-15, EOD-104, EOD-43, EOD-86, EOD-11, EOD-16, EOD-69, EOD-6, ST-108; the newest is X-DDD3FD.",
    ACTION_IN_PROGRESS: `Action act_01937c2a9e4b7d1f8c6a5b4e3d2c1b0c on this shipment is still awaiting ${delhivery.name}'s answer; GET its actions to follow it.`,
    SANDBOX_SHIPMENT_SHARED: `Another account follows delhivery 1234567890121 too, so advancing it would send that account's webhooks; advance a number only your account follows.`,
    NOT_FOUND: "No such endpoint. The API reference is at /docs.",
    COURIER_NOT_SUPPORTED: `Tracking for ${delhivery.name} is not available through the API right now.`,
    INVALID_TRACKING_NUMBER: `That is not a ${delhivery.name} tracking number: expected ${delhivery.awb.description} (e.g. ${delhivery.awb.example}).`,
    HTTPS_REQUIRED: "This API is served over HTTPS only; repeat the request with https://.",
    BAD_REQUEST: "Missing Stripe-Signature header.",
    WEBHOOK_IS_LIVE: "Test fires go to test webhooks only; this webhook is live.",
    WEBHOOK_LIMIT_REACHED: `An account can have at most ${MAX_WEBHOOKS} webhooks; delete one first.`,
    REQUEST_TIMEOUT: `The request body did not arrive within ${DEFAULT_BODY_TIMEOUT_MS / 1000} s; send it at once.`,
    PAYLOAD_TOO_LARGE: `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`,
    UNSUPPORTED_MEDIA_TYPE: "Request bodies must be JSON (Content-Type: application/json).",
    RATE_LIMITED: `Rate limit of ${free.rate_limit_per_minute} requests per minute exceeded for this account; retry after 42 s.`,
    METHOD_NOT_ALLOWED: "DELETE is not allowed on this path; it accepts GET.",
    DEMO_RATE_LIMITED: `The demo allows ${DEMO_LIMIT_PER_HOUR} requests per hour per IP address. Get a free API key at ${publicBaseUrl}/dashboard/sign-up and use /v1/track.`,
    INTERNAL_ERROR: "Unexpected error; quote request id req_01937c1e5b8a7c4e9f3d2a1b0c9d8e7f to support.",
    SERVICE_ERROR: `${delhivery.name} is temporarily unavailable; retry shortly.`,
    SERVICE_UNAVAILABLE: "The service is temporarily unavailable; retry shortly.",
    COURIER_BUSY: `Too many ${delhivery.name} lookups are queued to answer this one in time; retry in 15 s.`,
    TEST_WEBHOOKS_DISABLED: "Test fires are switched off by the operator right now; try again later.",
    TIMEOUT: `${delhivery.name} did not answer in time; retry shortly.`,
  };
}

/** The messages with links relative to the deployment (for examples built without `PUBLIC_BASE_URL`). */
export const ERROR_MESSAGES = errorMessages("");

export const VALIDATION_EXAMPLE = {
  detail: [{ loc: ["query", "tracking_number"], msg: "Field required", type: "missing" }],
};
