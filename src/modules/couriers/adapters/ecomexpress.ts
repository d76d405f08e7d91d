/** ecomexpress adapter: not implemented yet (stub; replaced by the adapter's real implementation). */
import { CourierError, type CourierAdapter } from "./types.ts";

export const ecomexpressAdapter: CourierAdapter = {
  id: "ecomexpress",
  defaultBaseUrl: "https://invalid.example",
  envPrefix: "ECOMEXPRESS",
  credentialVars: [],
  async track() {
    throw new CourierError("backend", "ecomexpress adapter not implemented");
  },
};
