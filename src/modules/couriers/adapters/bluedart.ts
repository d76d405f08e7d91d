/** bluedart adapter: not implemented yet (stub; replaced by the adapter's real implementation). */
import { CourierError, type CourierAdapter } from "./types.ts";

export const bluedartAdapter: CourierAdapter = {
  id: "bluedart",
  defaultBaseUrl: "https://invalid.example",
  envPrefix: "BLUEDART",
  credentialVars: [],
  async track() {
    throw new CourierError("backend", "bluedart adapter not implemented");
  },
};
