/**
 * The credentials of sandbox mode: every adapter without credentials of its own is given these values (through
 * the simulator's `credential`, src/modules/couriers/simulator.ts), and each twin accepts exactly them, so the
 * adapters' real authentication code runs end to end.
 */

/** `DHL_API_KEY` → `sandbox-dhl-api-key`. */
export function sandboxCredential(variable: string): string {
  return `sandbox-${variable.toLowerCase().replace(/_/g, "-")}`;
}
