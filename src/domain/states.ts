/** The one enum of shipment states and its two public spellings (spec: States and transitions). */
export const STATES = [
  "pending",
  "in_transit",
  "out_for_delivery",
  "delivered",
  "exception",
  "returned",
  "cancelled",
] as const;
export type ShipmentState = (typeof STATES)[number];

/** `ShipmentState` / `CheckpointState` in `GET /v1/track` (spec sample spells `intransit`). */
export const TRACK_SPELLING = {
  pending: "pending",
  in_transit: "intransit",
  out_for_delivery: "outfordelivery",
  delivered: "delivered",
  exception: "exception",
  returned: "returned",
  cancelled: "cancelled",
} as const satisfies Record<ShipmentState, string>;

/** Webhook `data.status` (spec: States and transitions). */
export const WEBHOOK_SPELLING = {
  pending: "pending",
  in_transit: "in_transit",
  out_for_delivery: "out_for_delivery",
  delivered: "delivered",
  exception: "exception",
  returned: "returned",
  cancelled: "cancelled",
} as const satisfies Record<ShipmentState, string>;
export type WebhookSpelling = (typeof WEBHOOK_SPELLING)[ShipmentState];

/** Terminal states: the service stops following (spec: States and transitions, "Terminal facts"). */
const TERMINAL: ReadonlySet<ShipmentState> = new Set(["delivered", "returned", "cancelled"]);
export const isTerminal = (s: ShipmentState) => TERMINAL.has(s);

/** Sub-reasons refining a state (kept on checkpoints and the shipment). */
export type SubStatus =
  | "info_received"
  | "picked_up"
  | "reached_destination"
  | "ready_for_pickup"
  | "delayed"
  | "delivery_attempt_failed"
  | "held"
  | "damaged"
  | "lost"
  | "expired"
  | "rto_initiated"
  | "rto_in_transit"
  | "rto_delivered";

/** The service's own short labels for `MostRecentStatus` (docs/spec-map.md, "Resources"): never the courier's wording. */
export function mostRecentStatus(state: ShipmentState, sub: SubStatus | null | undefined): string {
  switch (state) {
    case "pending":
      return "Order information received";
    case "in_transit":
      if (sub === "picked_up") return "Picked up";
      if (sub === "reached_destination" || sub === "ready_for_pickup") return "Reached destination hub";
      return "In transit";
    case "out_for_delivery":
      return "Out for delivery";
    case "delivered":
      return "Delivered";
    case "exception":
      if (sub === "delivery_attempt_failed") return "Delivery attempt failed";
      if (sub === "held") return "Held at facility";
      if (sub === "rto_initiated" || sub === "rto_in_transit") return "Return to origin initiated";
      return "Exception";
    case "returned":
      return sub === "rto_initiated" || sub === "rto_in_transit" ? "Return to origin initiated" : "Returned to shipper";
    case "cancelled":
      return "Cancelled";
  }
}
