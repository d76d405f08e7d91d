/** The contract between the simulator (server.ts) and each courier twin, in its own file so neither imports the other. */
import type { Scenario } from "./scenario.ts";

/** What a twin can ask of the simulator. */
export interface SimContext {
  /** The scenario for a number now (records when the simulator first saw it). */
  scenario(trackingNumber: string): Scenario;
  /** Generic failures for every courier: digit 5 holds the request, digit 6 answers 503; undefined carries on. */
  gate(trackingNumber: string): Promise<Response | undefined>;
  /** Counts one backend call for `trackingNumber` (coalescing tests read it). */
  count(twinId: string, trackingNumber: string): void;
  now(): number;
  /** Seconds between scripted steps (SANDBOX_STEP_SECONDS): twins that move a shipment on pace it by them. */
  stepSeconds: number;
  /** Seconds the asynchronous aggregator takes before it has an answer (SANDBOX_ASYNC_SECONDS). */
  asyncSeconds: number;
  /** Per-twin scratch state (tokens issued, registrations). */
  state: Map<string, unknown>;
}

export interface Twin {
  /** Adapter id; the twin serves `/<id>/…`. */
  id: string;
  handle(req: Request, url: URL, sim: SimContext): Response | Promise<Response>;
}
