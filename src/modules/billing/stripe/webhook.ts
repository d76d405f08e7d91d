/** `POST /billing/stripe/webhook`: signature checked over the raw bytes first (docs/billing.md). */
import type Stripe from "stripe";
import { errorBody, type ErrorCode } from "../../../lib/errors.ts";
import type { Clock } from "../../../lib/clock.ts";
import type { Logger } from "../../../lib/log.ts";
import type { Db } from "../../../db/client.ts";
import type { StripeBillingConfig } from "./client.ts";
import { applyStripeEvent } from "./events.ts";
import { jsonResponse } from "../../../lib/json.ts";

export const STRIPE_WEBHOOK_PATH = "/billing/stripe/webhook";
/** Largest body read (the API's request-body limit); Stripe's event payloads are a few KiB. */
const STRIPE_WEBHOOK_MAX_BYTES = 64 * 1024;
/** Maximum age of a signature timestamp, seconds (Stripe's SDK default; limits replay of a captured request). */
const STRIPE_SIGNATURE_TOLERANCE_S = 300;

const json = (status: number, body: unknown) => jsonResponse(status, body);
const fail = (status: number, code: ErrorCode, message: string) => json(status, errorBody(code, message));

/** Reads at most `max` bytes of the body; undefined when it is longer (the rest is never buffered). */
async function readBounded(request: Request, max: number): Promise<Uint8Array | undefined> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    parts.push(value);
  }
  const out = new Uint8Array(size);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.byteLength;
  }
  return out;
}

export interface StripeWebhookDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  cfg: StripeBillingConfig;
  stripe: Stripe;
}

/** The webhook handler: a plain `Request → Response` function (registered ahead of the JSON body parser). */
export function stripeWebhookHandler(d: StripeWebhookDeps): (request: Request) => Promise<Response> {
  const log = d.log.child({ component: "stripe-webhook" });
  return async (request) => {
    const signature = request.headers.get("stripe-signature");
    if (!signature) return fail(400, "BAD_REQUEST", "Missing Stripe-Signature header.");
    const raw = await readBounded(request, STRIPE_WEBHOOK_MAX_BYTES);
    if (!raw) return fail(413, "PAYLOAD_TOO_LARGE", `Request bodies are limited to ${STRIPE_WEBHOOK_MAX_BYTES} bytes.`);
    let event: Stripe.Event;
    try {
      event = await d.stripe.webhooks.constructEventAsync(
        raw,
        signature,
        d.cfg.webhookSecret,
        STRIPE_SIGNATURE_TOLERANCE_S,
        undefined,
        d.clock.now(),
      );
    } catch {
      log.warn("stripe webhook refused: signature verification failed");
      return fail(400, "BAD_REQUEST", "Stripe signature verification failed.");
    }
    try {
      const outcome = await applyStripeEvent(d.db, d.cfg, log, event);
      log.info("stripe event", { event_id: event.id, type: event.type, outcome });
      return json(200, { received: true });
    } catch (err) {
      log.error("stripe event not recorded; Stripe will retry", {
        event_id: event.id,
        type: event.type,
        error: err as Error,
      });
      return fail(503, "SERVICE_UNAVAILABLE", "The event could not be recorded; retry later.");
    }
  };
}
