/** Event names (spec: Events) and which state change has an event of its own. */
import type { ShipmentState } from "./states.ts";
import { COURIER_EVENT_TYPES } from "./courier-health.ts";

/** Every event name: the spec's Events table in order, then ours (docs/predictions.md, docs/ndr-actions.md), sent only when listed. */
export const EVENT_TYPES = [
  "tracking.updated",
  "tracking.in_transit",
  "tracking.out_for_delivery",
  "tracking.delivered",
  "tracking.exception",
  "tracking.eta_changed",
  "tracking.stalled",
  "tracking.action_updated",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What a webhook may list: the shipment events, then the courier health events (docs/courier-health.md). */
export const WEBHOOK_EVENT_TYPES = [...EVENT_TYPES, ...COURIER_EVENT_TYPES] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** True for an event about a courier rather than a shipment. */
export const isCourierEvent = (e: string): e is (typeof COURIER_EVENT_TYPES)[number] => e.startsWith("courier.");

/** A shipment event as the tracking module stored it (spec: Events; `enqueuedAt` fixed per event, UTC, to the second). */
export interface StoredEvent {
  eventId: string;
  shipmentId: string;
  type: EventType;
  enqueuedAt: Date;
  /** Only this account's webhooks get it (an NDR action is the requesting account's own: docs/ndr-actions.md). */
  accountId?: string;
}

/** Event for a change to `state` (spec: Events table), null when none; exception, returned, cancelled share one. */
export function eventForState(
  state: ShipmentState,
): Exclude<
  EventType,
  "tracking.updated" | "tracking.eta_changed" | "tracking.stalled" | "tracking.action_updated"
> | null {
  switch (state) {
    case "in_transit":
      return "tracking.in_transit";
    case "out_for_delivery":
      return "tracking.out_for_delivery";
    case "delivered":
      return "tracking.delivered";
    case "exception":
    case "returned":
    case "cancelled":
      return "tracking.exception";
    case "pending":
      return null;
  }
}
