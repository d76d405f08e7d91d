/**
 * A realistic data set for the layout test (test/dashboard/browser-layout.test.ts): an account on Growth with three
 * webhooks whose URLs are long (a port, a deep path, a query string), 50 followed shipments across the states and
 * couriers, and five abandoned deliveries of six attempts each (30 attempts) with error texts and response snippets.
 * Alert settings with a long address and three alerts. Rows go straight into the database: nothing is ever sent to the URLs.
 */
import { eq } from "drizzle-orm";
import { accounts, deliveries, deliveryAttempts, follows, shipments, webhooks } from "../../src/db/schema/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { setUsage } from "../../src/modules/accounts/service.ts";
import type { TestContext } from "../helpers/app.ts";
import { recordAlert } from "../../src/modules/alerts/record.ts";
import { requestAddress } from "../../src/modules/alerts/address.ts";
import { saveAlertSettings } from "../../src/modules/alerts/settings.ts";

export const LONG_URL =
  "https://hooks.merchant-logistics-integration.example.com:8443/api/v2/courier-tracking/webhooks/receive?tenant=acme-retail-india&channel=primary";
const STATES = ["pending", "in_transit", "out_for_delivery", "delivered", "exception", "returned", "cancelled"];
const REASONS = ["customer_unavailable", "address_issue", "customer_refused"];
const COURIERS = ["delhivery", "bluedart", "ekart", "xpressbees", "dtdc"];

export interface Seeded {
  hooks: string[];
  /** The webhook with the 30 attempts. */
  busy: string;
}

/** Seeds the data set for `accountId` (moved to Growth so live webhooks are allowed). */
export async function seedRealistic(ctx: TestContext, accountId: string): Promise<Seeded> {
  const db = ctx.tdb.db;
  const now = ctx.clock.now();
  await db.update(accounts).set({ plan: "growth" }).where(eq(accounts.id, accountId));
  await setUsage(db, accountId, 10_600, now);
  const hooks = [newId("wh"), newId("wh"), newId("wh")];
  await db.insert(webhooks).values(
    hooks.map((id, i) => ({
      id,
      accountId,
      url: `${LONG_URL}&n=${i}`,
      events: ["tracking.in_transit", "tracking.out_for_delivery", "tracking.delivered", "tracking.exception"],
      mode: i === 2 ? "test" : "live",
      description: i === 0 ? "Order management system (production), retries handled by the integration team" : null,
      status: i === 1 ? "deactivated" : "active",
      failureCount: i === 1 ? 20 : 3,
      // Masked only (the pages never show a raw value): long names and values as a gateway would have them.
      headersMasked: (i === 0
        ? { Authorization: "Bear…••••", "X-Merchant-Integration-Tenant-Identifier": "acme…••••" }
        : {}) as Record<string, string>,
    })),
  );
  const ships = Array.from({ length: 50 }, (_, i) => ({
    id: newId("shp"),
    courier: COURIERS[i % COURIERS.length]!,
    trackingNumber: `${String(5011234567000 + i * 7919)}${i % 3 === 0 ? "-RTO-REVERSE-PICKUP" : ""}`,
    checkpoints: [
      {
        at: new Date(now - i * 3_600_000).toISOString(),
        state: STATES[i % STATES.length]!,
        status: "Shipment in transit",
        location: "Bhiwandi Hub, Maharashtra",
      },
    ] as never,
    state: STATES[i % STATES.length]!,
    reasonCode: STATES[i % STATES.length] === "exception" ? REASONS[i % REASONS.length]! : null,
    stalledAt: STATES[i % STATES.length] === "in_transit" && i > 20 ? new Date(now - 3_600_000) : null,
    mostRecentStatus:
      i % 4 === 0
        ? "Consignee not available at the delivery address, customer asked to reattempt tomorrow"
        : "Shipment in transit",
    lastCheckedAt: new Date(now - i * 60_000),
    nextCheckAt: new Date(now + 8 * 3_600_000),
  }));
  await db.insert(shipments).values(ships);
  await db.insert(follows).values(
    ships.map((s, i) => ({
      accountId,
      shipmentId: s.id,
      reference: i % 2 ? `ORDER-2026-11-${String(10_000 + i)}` : null,
    })),
  );
  const busy = hooks[0]!;
  const ids = Array.from({ length: 5 }, () => newId("dlv"));
  await db.insert(deliveries).values(
    ids.map((id, i) => ({
      id,
      webhookId: busy,
      accountId,
      shipmentId: ships[i]!.id,
      eventType: "tracking.in_transit",
      mode: "live",
      state: "abandoned",
      attempts: 6,
      enqueuedAt: new Date(now - i * 3_600_000),
      lastStatusCode: 503,
    })),
  );
  await db.insert(deliveryAttempts).values(
    ids.flatMap((deliveryId, i) =>
      [1, 2, 3, 4, 5, 6].map((attempt) => ({
        id: newId("att"),
        deliveryId,
        webhookId: busy,
        attempt,
        url: `${LONG_URL}&n=0`,
        startedAt: new Date(now - i * 3_600_000 + attempt * 60_000),
        durationMs: 1200 + attempt,
        statusCode: attempt % 2 ? 503 : null,
        error: attempt % 2 ? null : "timeout",
        responseSnippet:
          attempt % 2
            ? '{"error":"upstream_unavailable","message":"The order service is in maintenance until 02:00 IST; retry later"}'
            : null,
      })),
    ),
  );
  await saveAlertSettings(db, accountId, {
    email: "logistics-operations-alerts.primary-contact@merchant-logistics-integration.example.com",
    disabled: ["api_key_created"],
  });
  // A second long address waiting for its confirmation link: the page's pending state and its resend button.
  await requestAddress(
    db,
    ctx.deps.secretsKey,
    accountId,
    "escalations-after-hours.logistics-team@merchant-logistics-integration.example.com",
    now,
  );
  await recordAlert(db, {
    accountId,
    kind: "webhook_deactivated",
    dedupeKey: "seed",
    details: { webhook_id: hooks[1], url: `${LONG_URL}&n=1` },
    at: now,
  });
  await recordAlert(db, {
    accountId,
    kind: "quota_80",
    dedupeKey: "2026-11",
    details: { period: "2026-11", quota: 150_000, mark: 80 },
    at: now,
  });
  await recordAlert(db, {
    accountId,
    kind: "api_key_created",
    dedupeKey: "seed",
    details: { name: "Warehouse management system integration (production, Bhiwandi)", prefix: "ctk_AbCd" },
    at: now,
  });
  return { hooks, busy };
}
