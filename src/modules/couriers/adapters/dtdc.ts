/** dtdc adapter: not implemented yet (stub; replaced by the adapter's real implementation). */
import { CourierError, type CourierAdapter } from "./types.ts";

export const dtdcAdapter: CourierAdapter = {
  id: "dtdc",
  defaultBaseUrl: "https://invalid.example",
  envPrefix: "DTDC",
  credentialVars: [],
  async track() {
    throw new CourierError("backend", "dtdc adapter not implemented");
  },
};
