/**
 * How the couriers module reaches a courier simulator (`COURIER_MODE=sandbox`) while knowing nothing about it: the
 * simulator (src/sandbox/) implements this interface and is handed to `createCourierBackends` at composition
 * (main.ts, the test helpers, the benchmarks). Which numbers mean what, and which credentials it accepts, stay on
 * the simulator's side.
 */
import type { AdapterId, Courier } from "./catalogue.ts";

export interface CourierSimulator {
  /** Base URL that serves `adapterId`'s wire format, e.g. `http://127.0.0.1:<port>/dhl`. */
  baseUrlFor(adapterId: string): string;
  /** The value the simulator accepts for one credential variable (`DHL_API_KEY`, …). */
  credential(variable: string): string;
  /**
   * The adapter that answers `trackingNumber` instead of the courier's own (a simulator may send some numbers
   * through an aggregator), or undefined for the courier's own adapter.
   */
  route(courier: Courier, trackingNumber: string): AdapterId | undefined;
  /**
   * Moves `trackingNumber` to its next scripted state now (the sandbox advance endpoint).
   * @returns false when its script has no state left to move to.
   */
  advance?(trackingNumber: string): boolean;
}
