/** Bearer tokens a twin has issued, kept in the simulator's per-twin scratch state. */
import type { SimContext } from "./twin.ts";

/** The map token → simulator-clock ms (expiry or issue time, as the twin decides) for `twinId`. */
export function issuedTokens(sim: SimContext, twinId: string): Map<string, number> {
  const key = `${twinId}:tokens`;
  let m = sim.state.get(key) as Map<string, number> | undefined;
  if (!m) {
    m = new Map();
    sim.state.set(key, m);
  }
  return m;
}
