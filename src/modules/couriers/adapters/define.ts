/** What a courier folder declares in its `index.ts`; the registry (carriers/index.ts) lists the declarations. */
import type { RateLimit } from "../../../config/index.ts";
import type { Twin } from "../../../twin-kit/twin.ts";
import type { CatalogueEntry } from "./courier.ts";
import type { ReasonTable } from "./reasons.ts";
import type { CourierAdapter } from "./types.ts";

export interface CourierDefinition<Id extends string = string> {
  /** The folder name: adapter id, twin path (`/<id>/…`), backend name in COURIER_RATE_LIMITS and SANDBOX_DEGRADE. */
  id: Id;
  /** The backend; its `envPrefix` and `credentialVars` are the courier's environment variables. */
  adapter: CourierAdapter;
  /** Its own catalogue entry; an aggregator has none. */
  courier?: CatalogueEntry;
  /** Catalogue couriers without an adapter of their own that this backend answers (an aggregator's). */
  serves?: readonly CatalogueEntry[];
  /** Default rate budget from the courier's published limits (its README, "Rate budget"); live backends only. */
  rateLimit: RateLimit;
  /** Its failed-attempt (NDR) reason table (docs/ndr.md). */
  reasons: ReasonTable;
  /** Environment prefixes also read as courier variables besides `adapter.envPrefix`. */
  otherEnvPrefixes?: readonly string[];
  /** The simulator's stand-in (sandbox mode); only src/sandbox/ calls it. */
  twin: Twin;
}

/**
 * A courier folder's declaration, checked: the adapter and the twin answer to the folder's id.
 * @throws Error when they do not (a folder copied without renaming them)
 */
export function defineCourier<const Id extends string>(d: CourierDefinition<Id>): CourierDefinition<Id> {
  if (d.adapter.id !== d.id || d.twin.id !== d.id)
    throw new Error(`courier ${d.id}: adapter id ${d.adapter.id} and twin id ${d.twin.id} must be ${d.id}`);
  return d;
}
