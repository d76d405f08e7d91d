/** fedex adapter: not implemented yet (stub; replaced by the adapter's real implementation). */
import { CourierError, type CourierAdapter } from "./types.ts";

export const fedexAdapter: CourierAdapter = {
  id: "fedex",
  defaultBaseUrl: "https://invalid.example",
  envPrefix: "FEDEX",
  credentialVars: [],
  async track() {
    throw new CourierError("backend", "fedex adapter not implemented");
  },
};
