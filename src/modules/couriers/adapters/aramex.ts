/** aramex adapter: not implemented yet (stub; replaced by the adapter's real implementation). */
import { CourierError, type CourierAdapter } from "./types.ts";

export const aramexAdapter: CourierAdapter = {
  id: "aramex",
  defaultBaseUrl: "https://invalid.example",
  envPrefix: "ARAMEX",
  credentialVars: [],
  async track() {
    throw new CourierError("backend", "aramex adapter not implemented");
  },
};
