/** xpressbees adapter: not implemented yet (stub; replaced by the adapter's real implementation). */
import { CourierError, type CourierAdapter } from "./types.ts";

export const xpressbeesAdapter: CourierAdapter = {
  id: "xpressbees",
  defaultBaseUrl: "https://invalid.example",
  envPrefix: "XPRESSBEES",
  credentialVars: [],
  async track() {
    throw new CourierError("backend", "xpressbees adapter not implemented");
  },
};
