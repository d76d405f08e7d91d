/** Sandbox credentials: every adapter without its own is given these, and each twin accepts exactly them. */

/** `DHL_API_KEY` → `sandbox-dhl-api-key`. */
export function sandboxCredential(variable: string): string {
  return `sandbox-${variable.toLowerCase().replace(/_/g, "-")}`;
}
