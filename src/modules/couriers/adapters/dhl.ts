/** dhl adapter: not implemented yet (stub; replaced by the adapter's real implementation). */
import { CourierError, type CourierAdapter } from "./types.ts";

export const dhlAdapter: CourierAdapter = {
  id: "dhl",
  defaultBaseUrl: "https://invalid.example",
  envPrefix: "DHL",
  credentialVars: [],
  async track() {
    throw new CourierError("backend", "dhl adapter not implemented");
  },
};
