/** track17 adapter: not implemented yet (stub; replaced by the adapter's real implementation). */
import { CourierError, type CourierAdapter } from "./types.ts";

export const track17Adapter: CourierAdapter = {
  id: "track17",
  defaultBaseUrl: "https://invalid.example",
  envPrefix: "TRACK17",
  credentialVars: [],
  async track() {
    throw new CourierError("backend", "track17 adapter not implemented");
  },
};
