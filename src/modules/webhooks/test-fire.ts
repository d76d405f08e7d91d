/**
 * `POST /v1/webhooks/{id}/test` (spec: Events rule 3): one synchronous sample delivery to a TEST webhook, never
 * retried, through the real signing, address check and attempt log (docs/webhooks.md#test-fires--decision).
 */
import { eq } from "drizzle-orm";
import type { AppDeps } from "../../deps.ts";
import { accounts, deliveries, deliveryAttempts } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { newId } from "../../lib/ids.ts";
import type { WebhookEventType } from "../../domain/events.ts";
import { sendAttempt } from "./delivery/attempt.ts";
import type { SendOutcome, WebhookSender } from "./delivery/http.ts";
import { sampleDataFor } from "./delivery/payload.ts";
import { decryptSecret } from "../../secrets/cipher.ts";
import { requireWebhook, type WebhookRow } from "./service.ts";
import { openHeaders } from "./headers.ts";

/**
 * @throws AppError TEST_WEBHOOKS_DISABLED (503, kill-switch), WEBHOOK_NOT_FOUND (404), WEBHOOK_IS_LIVE (409).
 * @returns `delivered`, the last hop's `status_code` (null without a response), `attempt_ms` (wall ms).
 */
export async function testFire(
  deps: TestDeps,
  sender: WebhookSender,
  accountId: string,
  id: string,
  event?: WebhookEventType,
) {
  requireTestFires(deps);
  const wh = await requireWebhook(deps.db, accountId, id);
  if (wh.mode !== "test")
    throw new AppError("WEBHOOK_IS_LIVE", "Test fires go to test webhooks only; this webhook is live.");
  const secret = await signingSecret(deps, accountId);
  const ev = event ?? (wh.events[0] as WebhookEventType);
  const enqueuedAt = new Date(Math.floor(deps.clock.now() / 1000) * 1000);
  const started = performance.now();
  const deliveryId = newId("dlv");
  const out = await sendAttempt(sender, {
    deliveryId,
    webhookId: wh.id,
    url: wh.url,
    event: ev,
    mode: "test",
    attempt: 1,
    enqueuedAt,
    data: (enq) => sampleDataFor(ev, enq),
    secret,
    headers: openHeaders(deps.secretsKey, wh.id, wh.headersEnc),
  });
  const attemptMs = Math.round(performance.now() - started);
  await recordTestDelivery(deps, wh, deliveryId, ev, enqueuedAt, out);
  return { delivered: out.kind === "delivered", status_code: out.statusCode, attempt_ms: attemptMs };
}

type TestDeps = Pick<AppDeps, "db" | "clock" | "config" | "secretsKey">;

/** @throws AppError TEST_WEBHOOKS_DISABLED (503) while the operator's kill-switch is on. */
export function requireTestFires(deps: Pick<AppDeps, "config">): void {
  if (!deps.config.testWebhooksEnabled)
    throw new AppError(
      "TEST_WEBHOOKS_DISABLED",
      "Test fires are switched off by the operator right now; try again later.",
    );
}

/** The account's raw signing secret. @throws AppError INTERNAL_ERROR when it has none. */
export async function signingSecret(deps: Pick<AppDeps, "db" | "secretsKey">, accountId: string): Promise<string> {
  const [acc] = await deps.db
    .select({ enc: accounts.webhookSecretEnc })
    .from(accounts)
    .where(eq(accounts.id, accountId))
    .limit(1);
  if (!acc?.enc) throw new AppError("INTERNAL_ERROR", "The account has no signing secret.");
  return decryptSecret(deps.secretsKey, accountId, acc.enc);
}

/** Writes sent test delivery `dlv` (the id its attempt span named) with its final state and every hop; the worker never picks it up. */
export async function recordTestDelivery(
  deps: Pick<AppDeps, "db" | "clock">,
  wh: WebhookRow,
  dlv: string,
  ev: WebhookEventType,
  enqueuedAt: Date,
  out: SendOutcome,
): Promise<void> {
  const now = new Date(deps.clock.now());
  const state = out.kind === "delivered" ? "delivered" : out.kind === "dropped" ? "dropped" : "abandoned";
  await deps.db.transaction(async (tx) => {
    await tx.insert(deliveries).values({
      id: dlv,
      webhookId: wh.id,
      accountId: wh.accountId,
      eventType: ev,
      mode: "test",
      state,
      attempts: 1,
      nextAttemptAt: null,
      enqueuedAt,
      syntheticData: sampleDataFor(ev, enqueuedAt.toISOString()),
      lastStatusCode: out.statusCode,
      lastError: out.error,
      createdAt: now,
      updatedAt: now,
    });
    if (out.hops.length)
      await tx.insert(deliveryAttempts).values(
        out.hops.map((h) => ({
          id: newId("att"),
          deliveryId: dlv,
          webhookId: wh.id,
          attempt: 1,
          url: h.url,
          startedAt: new Date(h.startedAt),
          durationMs: h.durationMs,
          statusCode: h.statusCode,
          error: h.error,
          responseSnippet: h.snippet?.replaceAll("\u0000", "") ?? null,
        })),
      );
  });
}
