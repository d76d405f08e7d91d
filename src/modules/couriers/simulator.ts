/** How the couriers module reaches a courier simulator (src/sandbox/) while knowing nothing about it. */
import type { AdapterId, Courier } from "./catalogue.ts";

export interface CourierSimulator {
  /** Base URL that serves `adapterId`'s wire format, e.g. `http://127.0.0.1:<port>/dhl`. */
  baseUrlFor(adapterId: string): string;
  /** The value the simulator accepts for one credential variable (`DHL_API_KEY`, …). */
  credential(variable: string): string;
  /** The adapter that answers `trackingNumber` instead of the courier's own, or undefined. */
  route(courier: Courier, trackingNumber: string): AdapterId | undefined;
  /** Moves `trackingNumber` to its next scripted state now; false when none is left. */
  advance?(trackingNumber: string): boolean;
}
