/** `POST /v1/webhooks/{id}/audit`: one signed test delivery, three a receiver must refuse (docs/webhooks.md). */
import type { AppDeps } from "../../deps.ts";
import { AppError } from "../../lib/errors.ts";
import { newId } from "../../lib/ids.ts";
import type { WebhookEventType } from "../../domain/events.ts";
import { hitFixedWindow } from "../accounts/rate-limit.ts";
import { sendAttempt } from "./delivery/attempt.ts";
import type { SendOutcome, WebhookSender } from "./delivery/http.ts";
import { sampleDataFor } from "./delivery/payload.ts";
import { openHeaders } from "./headers.ts";
import { generateSecret } from "./secrets.ts";
import { requireWebhook } from "./service.ts";
import { recordTestDelivery, requireTestFires, signingSecret } from "./test-fire.ts";

/** The cases in the order they are sent: the first must be answered 2xx, the others 4xx. */
export const AUDIT_CASES = ["valid", "wrong_signature", "stale_timestamp", "no_signature"] as const;
export type AuditCase = (typeof AUDIT_CASES)[number];
/** Audits per account per fixed hour; each sends four requests to a URL the customer chose. */
export const AUDITS_PER_HOUR = 10;
const HOUR_MS = 3_600_000;
/** Age of `webhook-timestamp` in the stale case: twice the 5-minute tolerance Standard Webhooks recommends. */
const STALE_TIMESTAMP_MS = 10 * 60_000;
const RECEIVER_GUIDE = "docs/webhook-receivers.md";

const SIGNATURE_HEADERS = ["x-service-signature", "webhook-signature"];

/** Per case: the last hop's status (null without an answer, then `error` says why) and whether it is right. */
interface AuditCaseResult {
  case: AuditCase;
  status: number | null;
  verdict: "pass" | "fail";
  error: string | null;
}

const verdictOf = (c: AuditCase, out: SendOutcome): "pass" | "fail" => {
  if (c === "valid") return out.kind === "delivered" ? "pass" : "fail";
  return out.statusCode !== null && out.statusCode >= 400 && out.statusCode < 500 ? "pass" : "fail";
};

/**
 * Audits the receiver of webhook `id` (live or test; the cases are test deliveries either way).
 * @throws AppError TEST_WEBHOOKS_DISABLED (503, kill-switch), WEBHOOK_NOT_FOUND (404), RATE_LIMITED (429, Retry-After in s).
 */
export async function auditReceiver(
  deps: Pick<AppDeps, "db" | "clock" | "config" | "secretsKey">,
  sender: WebhookSender,
  accountId: string,
  id: string,
) {
  requireTestFires(deps);
  const wh = await requireWebhook(deps.db, accountId, id);
  const hit = await hitFixedWindow(deps.db, `webhook-audit:${accountId}`, AUDITS_PER_HOUR, HOUR_MS, deps.clock.now());
  if (!hit.allowed)
    throw new AppError(
      "RATE_LIMITED",
      `At most ${AUDITS_PER_HOUR} receiver audits an hour per account; retry after ${hit.resetSeconds} s.`,
      {},
      { "retry-after": String(hit.resetSeconds) },
    );
  const secret = await signingSecret(deps, accountId);
  const headers = openHeaders(deps.secretsKey, wh.id, wh.headersEnc);
  const ev = wh.events[0] as WebhookEventType;
  const cases: AuditCaseResult[] = [];
  for (const c of AUDIT_CASES) {
    const enqueuedAt = new Date(Math.floor(deps.clock.now() / 1000) * 1000);
    // The receiver compares webhook-timestamp with its own clock.
    const deliveryId = newId("dlv");
    const out = await sendAttempt(sender, {
      deliveryId,
      webhookId: wh.id,
      url: wh.url,
      event: ev,
      mode: "test",
      attempt: 1,
      enqueuedAt,
      headers,
      data: (enq) => sampleDataFor(ev, enq),
      secret: c === "wrong_signature" ? generateSecret() : secret,
      nowMs: c === "stale_timestamp" ? Date.now() - STALE_TIMESTAMP_MS : Date.now(),
      adjustHeaders: (h) => {
        h["x-webhook-audit"] = "true";
        if (c === "no_signature") for (const name of SIGNATURE_HEADERS) delete h[name];
      },
    });
    await recordTestDelivery(deps, wh, deliveryId, ev, enqueuedAt, out);
    cases.push({ case: c, status: out.statusCode, verdict: verdictOf(c, out), error: out.error });
  }
  return {
    verdict: cases.every((c) => c.verdict === "pass") ? ("ok" as const) : ("failed" as const),
    cases,
    guide: RECEIVER_GUIDE,
  };
}
