/**
 * A Stripe twin: a real HTTPS server on 127.0.0.1 that speaks the parts of
 * Stripe's API the service calls, in Stripe's wire format (form-encoded
 * requests with bracket notation, JSON objects with `object` fields, the
 * `{"error":{type,code,message,param}}` envelope, Bearer secret-key auth),
 * and sends webhook events signed exactly as Stripe signs them:
 * `Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
 *
 * Endpoints: POST /v1/checkout/sessions, GET and POST /v1/subscriptions/:id.
 * What a customer or Stripe's clock does is driven by the test:
 * `completeCheckout` (the customer pays), `endPeriod` (the period ends: a
 * cancelling subscription is deleted, others renew). Events queue until
 * `flush()` delivers them, as Stripe delivers after its API call returned.
 *
 * NETWORK SAFETY: listens on 127.0.0.1 and delivers only to the endpoint the
 * test sets (a loopback URL).
 */
import { createHmac } from "node:crypto";
import type { Clock } from "../../src/lib/clock.ts";

export const TWIN_SECRET_KEY = "sk_test_twin0000000000000000";
export const TWIN_WEBHOOK_SECRET = "whsec_twinSigningSecret000000000000";
export const TWIN_PRICES = {
  starter: "price_twin_starter",
  growth: "price_twin_growth",
  business: "price_twin_business",
} as const;
const API_VERSION = "2026-10-28.endive";
const PERIOD_S = 30 * 86_400;

type Obj = Record<string, any>;

/** Decodes Stripe's form encoding (`a[b][0][c]=v`) into nested objects and arrays. */
export function decodeStripeForm(body: string): Obj {
  const root: Obj = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = key.replace(/\]/g, "").split("[");
    let node: any = root;
    path.forEach((seg, i) => {
      const last = i === path.length - 1;
      const nextIsIndex = !last && /^\d+$/.test(path[i + 1]!);
      if (last) node[seg] = value;
      else node = node[seg] ??= nextIsIndex ? [] : {};
    });
  }
  return root;
}

/** Stripe's signature header for `payload` at `t` (seconds), computed here with node:crypto. */
export function stripeSignature(payload: string, secret: string, t: number): string {
  return `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${payload}`, "utf8").digest("hex")}`;
}

const rid = (prefix: string) => `${prefix}_${Bun.randomUUIDv7().replaceAll("-", "").slice(0, 24)}`;
const stripeError = (status: number, type: string, message: string, code?: string, param?: string) =>
  Response.json(
    { error: { type, message, ...(code ? { code } : {}), ...(param ? { param } : {}) } },
    { status, headers: { "request-id": rid("req") } },
  );

export interface TwinEvent {
  id: string;
  type: string;
  payload: string;
}

export async function startStripeTwin(opts: { clock: Clock; cert: string; key: string }) {
  const { clock } = opts;
  const now = () => Math.floor(clock.now() / 1000);
  const sessions = new Map<string, Obj>();
  const subscriptions = new Map<string, Obj>();
  const requests: { method: string; path: string; form: Obj }[] = [];
  const queue: TwinEvent[] = [];
  const sent = new Map<string, TwinEvent>();
  let endpoint = "";
  const priceObj = (id: string) => ({
    id,
    object: "price",
    active: true,
    currency: "inr",
    recurring: { interval: "month", interval_count: 1 },
    type: "recurring",
    livemode: false,
  });
  const knownPrice = (id: unknown) => Object.values(TWIN_PRICES).includes(id as never);

  function emit(type: string, object: Obj, previous?: Obj) {
    const ev = {
      id: rid("evt"),
      object: "event",
      api_version: API_VERSION,
      created: now(),
      data: { object: structuredClone(object), ...(previous ? { previous_attributes: previous } : {}) },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
    };
    queue.push({ id: ev.id, type, payload: JSON.stringify(ev, null, 2) });
  }

  function createSession(form: Obj): Response {
    const price = form.line_items?.[0]?.price;
    if (form.mode !== "subscription")
      return stripeError(
        400,
        "invalid_request_error",
        "mode must be subscription in this twin",
        "parameter_invalid_empty",
        "mode",
      );
    if (!knownPrice(price))
      return stripeError(
        400,
        "invalid_request_error",
        `No such price: '${price}'`,
        "resource_missing",
        "line_items[0][price]",
      );
    if (!form.success_url)
      return stripeError(
        400,
        "invalid_request_error",
        "Missing required param: success_url.",
        "parameter_missing",
        "success_url",
      );
    const id = `cs_test_${Bun.randomUUIDv7().replaceAll("-", "")}`;
    const s = {
      id,
      object: "checkout.session",
      mode: "subscription",
      status: "open",
      payment_status: "unpaid",
      livemode: false,
      created: now(),
      expires_at: now() + 86_400,
      url: `${server.url.origin}/c/pay/${id}`,
      client_reference_id: form.client_reference_id ?? null,
      customer: form.customer ?? null,
      customer_email: form.customer_email ?? null,
      metadata: form.metadata ?? {},
      subscription: null,
      success_url: form.success_url,
      cancel_url: form.cancel_url ?? null,
      line_items_price: price,
      subscription_metadata: form.subscription_data?.metadata ?? {},
    };
    sessions.set(id, s);
    const { line_items_price: _p, subscription_metadata: _m, ...wire } = s;
    return Response.json(wire);
  }

  function updateSubscription(sub: Obj, form: Obj): Response {
    const previous: Obj = {};
    if (form.cancel_at_period_end !== undefined) {
      previous.cancel_at_period_end = sub.cancel_at_period_end;
      sub.cancel_at_period_end = form.cancel_at_period_end === "true";
      sub.canceled_at = sub.cancel_at_period_end ? now() : null;
      sub.cancel_at = sub.cancel_at_period_end ? sub.items.data[0].current_period_end : null;
    }
    const item = form.items?.[0];
    if (item) {
      if (item.id !== sub.items.data[0].id)
        return stripeError(
          400,
          "invalid_request_error",
          `No such subscription item: '${item.id}'`,
          "resource_missing",
          "items[0][id]",
        );
      if (!knownPrice(item.price))
        return stripeError(
          400,
          "invalid_request_error",
          `No such price: '${item.price}'`,
          "resource_missing",
          "items[0][price]",
        );
      previous.items = structuredClone(sub.items);
      sub.items.data[0].price = priceObj(item.price);
    }
    emit("customer.subscription.updated", sub, previous);
    return Response.json(sub);
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: opts.cert, key: opts.key },
    async fetch(req) {
      const url = new URL(req.url);
      const form = decodeStripeForm(req.method === "POST" ? await req.text() : url.search.slice(1));
      requests.push({ method: req.method, path: url.pathname, form });
      if (req.headers.get("authorization") !== `Bearer ${TWIN_SECRET_KEY}`)
        return stripeError(401, "invalid_request_error", "Invalid API Key provided.", undefined, undefined);
      if (req.method === "POST" && url.pathname === "/v1/checkout/sessions") return createSession(form);
      const m = /^\/v1\/subscriptions\/([A-Za-z0-9_]+)$/.exec(url.pathname);
      const sub = m ? subscriptions.get(m[1]!) : undefined;
      if (m && !sub)
        return stripeError(404, "invalid_request_error", `No such subscription: '${m[1]}'`, "resource_missing", "id");
      if (sub && req.method === "GET") return Response.json(sub);
      if (sub && req.method === "POST") return updateSubscription(sub, form);
      return stripeError(404, "invalid_request_error", `Unrecognized request URL (${req.method}: ${url.pathname}).`);
    },
  });

  return {
    url: server.url.origin,
    sessions,
    subscriptions,
    requests,
    queue,
    /** Where `flush()` POSTs events (the service's /billing/stripe/webhook). */
    setEndpoint(url: string) {
      endpoint = url;
    },
    /** The customer pays on the Checkout page: a customer and an active subscription appear; two events queue. */
    completeCheckout(sessionId: string): Obj {
      const s = sessions.get(sessionId);
      if (!s || s.status !== "open") throw new Error(`no open session ${sessionId}`);
      const customer = s.customer ?? rid("cus");
      const start = now();
      const sub = {
        id: rid("sub"),
        object: "subscription",
        customer,
        status: "active",
        livemode: false,
        created: start,
        start_date: start,
        cancel_at_period_end: false,
        cancel_at: null,
        canceled_at: null,
        ended_at: null,
        metadata: s.subscription_metadata,
        items: {
          object: "list",
          has_more: false,
          url: "/v1/subscription_items",
          data: [
            {
              id: rid("si"),
              object: "subscription_item",
              quantity: 1,
              price: priceObj(s.line_items_price),
              current_period_start: start,
              current_period_end: start + PERIOD_S,
            },
          ],
        },
      };
      subscriptions.set(sub.id, sub);
      Object.assign(s, { status: "complete", payment_status: "paid", customer, subscription: sub.id });
      const { line_items_price: _p, subscription_metadata: _m, ...wire } = s;
      emit("checkout.session.completed", wire);
      emit("customer.subscription.created", sub);
      return sub;
    },
    /** The current period ends (move the clock first): a cancelling subscription is deleted, others renew. */
    endPeriod(subId: string) {
      const sub = subscriptions.get(subId)!;
      const item = sub.items.data[0];
      if (sub.cancel_at_period_end) {
        Object.assign(sub, { status: "canceled", ended_at: now() });
        emit("customer.subscription.deleted", sub);
      } else {
        const previous = { items: structuredClone(sub.items) };
        item.current_period_start = item.current_period_end;
        item.current_period_end += PERIOD_S;
        emit("customer.subscription.updated", sub, previous);
      }
    },
    /** Delivers queued events in order, each signed at the clock's time; returns each answer's status. */
    async flush(): Promise<{ id: string; type: string; status: number }[]> {
      const out = [];
      for (const ev of queue.splice(0)) {
        sent.set(ev.id, ev);
        out.push({ id: ev.id, type: ev.type, status: await this.deliver(ev.payload) });
      }
      return out;
    },
    /** Sends an already delivered event again (Stripe's retries and "resend" do this; same id, fresh signature). */
    resend(eventId: string): Promise<number> {
      return this.deliver(sent.get(eventId)!.payload);
    },
    /** POSTs `payload` with a signature header (default: a correct one for now). */
    async deliver(payload: string, signature = stripeSignature(payload, TWIN_WEBHOOK_SECRET, now())): Promise<number> {
      const res = await fetch(endpoint, {
        method: "POST",
        body: payload,
        headers: {
          "content-type": "application/json; charset=utf-8",
          "stripe-signature": signature,
          "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
        },
        tls: { ca: opts.cert },
      });
      await res.arrayBuffer();
      return res.status;
    },
    sentEvent: (id: string) => sent.get(id),
    stop: () => server.stop(true),
  };
}

export type StripeTwin = Awaited<ReturnType<typeof startStripeTwin>>;
