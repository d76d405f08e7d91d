/**
 * Example values for the OpenAPI document: per operation (parameters, request
 * body, success body — what Swagger UI and Postman prefill), and a sample
 * message per error code. Examples only: the service writes its own messages.
 */
import type { ErrorCode } from "../errors.ts";
import { PLANS } from "../modules/billing/plans.ts";
import { COURIERS } from "../modules/couriers/catalogue.ts";
import { TrackResponse } from "../modules/tracking/model.ts";
import { EVENT_TYPES } from "../modules/tracking/states.ts";

export const WH_ID = "wh_01937c1e5b8a7c4e9f3d2a1b0c9d8e7f";
const WEBHOOK = {
  id: WH_ID,
  url: "https://example.com/hooks/courier",
  events: ["tracking.delivered", "tracking.exception"],
  mode: "test",
  description: "Order updates",
  status: "active",
  failure_count: 0,
  created_at: "2026-11-05T10:00:00.000Z",
  updated_at: "2026-11-05T10:00:00.000Z",
};
const TRACK_EXAMPLE = (TrackResponse.examples as { success: true; data: unknown }[])[0]!;
const courier = (slug: string) => COURIERS.find((c) => c.slug === slug)!;
const view = (slug: string) => ({ slug, name: courier(slug).name });

/** Per operationId: parameter values, request body and success body examples (what Swagger UI and Postman prefill). */
export const OPERATION_EXAMPLES: Record<string, { params?: Record<string, string | number>; body?: unknown; ok?: unknown }> = {
  trackShipment: { params: { courier: "delhivery", tracking_number: courier("delhivery").awb.example }, ok: TRACK_EXAMPLE },
  demoTrack: { params: { courier: "dhl", tracking_number: "1234567890" }, ok: { success: true, data: TRACK_EXAMPLE.data } },
  listCouriers: { ok: { success: true, data: { couriers: ["delhivery", "bluedart", "dhl"].map(view), count: 3 } } },
  detectCourier: { params: { tracking_number: courier("delhivery").awb.example }, ok: { success: true, data: { couriers: [view("delhivery")], count: 1 } } },
  getCourier: { params: { slug: "delhivery" }, ok: { success: true, data: view("delhivery") } },
  listPlans: { ok: { success: true, data: { plans: PLANS, count: PLANS.length } } },
  createWebhook: {
    body: { url: WEBHOOK.url, events: WEBHOOK.events, mode: "test", description: WEBHOOK.description },
    ok: { success: true, data: { ...WEBHOOK, secret: "whsec_3q2-7wEAAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRo" } },
  },
  listWebhooks: { ok: { success: true, data: { webhooks: [WEBHOOK], count: 1 } } },
  rotateWebhookSecret: { ok: { success: true, data: { secret: "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8" } } },
  getWebhook: { params: { webhook_id: WH_ID }, ok: { success: true, data: WEBHOOK } },
  updateWebhook: { params: { webhook_id: WH_ID }, body: { description: "Order updates (all events)", events: [...EVENT_TYPES] }, ok: { success: true, data: { ...WEBHOOK, events: [...EVENT_TYPES] } } },
  deleteWebhook: { params: { webhook_id: WH_ID } },
  testWebhook: { params: { webhook_id: WH_ID }, body: { event: "tracking.delivered" }, ok: { success: true, data: { delivered: true, status_code: 200, attempt_ms: 84 } } },
  listWebhookDeliveries: {
    params: { webhook_id: WH_ID, limit: 20, cursor: "dlv_01937c2a9e4b7d1f8c6a5b4e3d2c1b0a" },
    ok: {
      success: true,
      data: {
        deliveries: [
          {
            id: "dlv_01937c2a9e4b7d1f8c6a5b4e3d2c1b0a",
            event: "tracking.delivered",
            mode: "test",
            state: "delivered",
            attempts: 1,
            enqueued_at: "2026-11-05T10:01:00.000Z",
            next_attempt_at: null,
            last_status_code: 200,
            last_error: null,
            created_at: "2026-11-05T10:01:00.000Z",
            attempt_log: [{ attempt: 1, url: WEBHOOK.url, started_at: "2026-11-05T10:01:00.120Z", duration_ms: 84, status_code: 200, error: null, response_snippet: "ok" }],
          },
        ],
        count: 1,
        next_cursor: null,
      },
    },
  },
};

/** A sample message per error code, for the examples only (the service writes its own). */
export const ERROR_MESSAGES: Record<ErrorCode, string> = {
  INVALID_API_KEY: "The API key is invalid or has been revoked.",
  QUOTA_EXCEEDED: "Monthly quota of 100 tracking requests used up; upgrade at https://localhost:8443/dashboard/billing",
  ACCOUNT_NEEDS_ATTENTION: "The account needs attention; contact support.",
  PLAN_UPGRADE_REQUIRED: "Live webhooks need the Growth or Business plan.",
  COURIER_NOT_FOUND: "Unknown courier slug 'delhivry'.",
  TRACKING_NOT_FOUND: "The courier has no record of this tracking number.",
  WEBHOOK_NOT_FOUND: "No webhook with this id.",
  NOT_FOUND: "Not found.",
  COURIER_NOT_SUPPORTED: "Tracking for this courier is not available through the API.",
  INVALID_TRACKING_NUMBER: "Not a Delhivery tracking number: expected 11 to 14 digits.",
  HTTPS_REQUIRED: "This API is served over HTTPS only; repeat the request with https://.",
  BAD_REQUEST: "Bad request.",
  WEBHOOK_IS_LIVE: "Test deliveries go to test webhooks only; this webhook is live.",
  WEBHOOK_LIMIT_REACHED: "An account can have at most 10 webhooks.",
  PAYLOAD_TOO_LARGE: "Request bodies are limited to 65536 bytes.",
  UNSUPPORTED_MEDIA_TYPE: "Unsupported media type.",
  RATE_LIMITED: "Rate limit of 10 requests per minute exceeded for this account; retry after 42 s.",
  DEMO_RATE_LIMITED: "The demo allows 5 requests per hour per IP address; sign up for a free API key.",
  INTERNAL_ERROR: "Unexpected error; quote the X-Request-Id when contacting support.",
  SERVICE_ERROR: "The courier's service answered with an error; retry.",
  SERVICE_UNAVAILABLE: "The service is temporarily unavailable; retry.",
  TEST_WEBHOOKS_DISABLED: "Test webhook deliveries are switched off.",
  TIMEOUT: "The courier's backend did not answer in time; retry.",
};

export const VALIDATION_EXAMPLE = { detail: [{ loc: ["query", "tracking_number"], msg: "Field required", type: "missing" }] };
