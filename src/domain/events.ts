/**
 * Event names (spec: Events): what a re-check that finds a change emits, and which state change has an event of
 * its own. Part of `src/domain/`, the shared vocabulary.
 */
import type { ShipmentState } from "./states.ts";

/**
 * Every event name: the spec's Events table in its order, then our own history's two (docs/predictions.md), which a
 * webhook receives only when it lists them.
 */
export const EVENT_TYPES = [
  "tracking.updated",
  "tracking.in_transit",
  "tracking.out_for_delivery",
  "tracking.delivered",
  "tracking.exception",
  "tracking.eta_changed",
  "tracking.stalled",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** A shipment event as the tracking module stored it (spec: Events; `enqueuedAt` fixed per event, UTC, to the second). */
export interface StoredEvent {
  eventId: string;
  shipmentId: string;
  type: EventType;
  enqueuedAt: Date;
}

/**
 * Webhook event for a change to `state` (spec: Events table); `null` when the state has no event of its own.
 * exception, returned and cancelled share `tracking.exception`; `data.status` tells them apart.
 */
export function eventForState(state: ShipmentState): Exclude<EventType, "tracking.updated" | "tracking.eta_changed" | "tracking.stalled"> | null {
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
