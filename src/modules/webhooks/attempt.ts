/**
 * One attempt, shared by the worker and the test fire: build the body from
 * the data as it is now, serialise it once, sign exactly those bytes, send
 * (spec: Events "Headers on every delivery"; Authentication 5).
 */
import type { AppDeps } from "../../app.ts";
import type { EventType } from "../tracking/states.ts";
import { WebhookSender, type SendOutcome } from "./http.ts";
import { isoSecond, serialisePayload, type PayloadData } from "./payload.ts";
import { systemResolver, type Resolver } from "./address-guard.ts";
import { signBody } from "./signing.ts";

export interface AttemptInput {
  webhookId: string;
  url: string;
  event: EventType;
  mode: "live" | "test";
  /** 1-based attempt number (header `X-Webhook-Delivery: <webhook_id>-<attempt>`). */
  attempt: number;
  enqueuedAt: Date;
  data: (enqueuedAt: string) => PayloadData;
  secret: string;
}

/** Sends one attempt. Never throws. */
export async function sendAttempt(sender: WebhookSender, a: AttemptInput): Promise<SendOutcome> {
  const enq = isoSecond(a.enqueuedAt);
  const body = serialisePayload(a.event, enq, a.data(enq));
  return sender.send({
    url: a.url,
    body,
    headers: {
      "x-service-signature": signBody(a.secret, body),
      "x-webhook-event": a.event,
      "x-webhook-delivery": `${a.webhookId}-${a.attempt}`,
      "x-webhook-mode": a.mode,
    },
  });
}

/** The sender configured from `WEBHOOK_*` settings. */
export function senderFromConfig(deps: Pick<AppDeps, "config" | "clock">, resolver: Resolver = systemResolver): WebhookSender {
  return new WebhookSender({
    allowCidrs: deps.config.webhookAllowPrivateCidrs,
    caFile: deps.config.webhookCaFile,
    timeoutMs: deps.config.webhookTimeoutMs,
    resolver,
    clock: deps.clock,
  });
}
