/** ups adapter: not implemented yet (stub; replaced by the adapter's real implementation). */
import { CourierError, type CourierAdapter } from "./types.ts";

export const upsAdapter: CourierAdapter = {
  id: "ups",
  defaultBaseUrl: "https://invalid.example",
  envPrefix: "UPS",
  credentialVars: [],
  async track() {
    throw new CourierError("backend", "ups adapter not implemented");
  },
};
