/**
 * The courier registry: every courier folder, one line each (README.md, "Adding a courier"). The catalogue, the
 * adapters, the rate budgets, the NDR reasons, the courier variables and the simulator's twins derive from it.
 */
import { aramex } from "./aramex/index.ts";
import { bluedart } from "./bluedart/index.ts";
import { delhivery } from "./delhivery/index.ts";
import { dhl } from "./dhl/index.ts";
import { dtdc } from "./dtdc/index.ts";
import { ecomexpress } from "./ecomexpress/index.ts";
import { fedex } from "./fedex/index.ts";
import { track17 } from "./track17/index.ts";
import { ups } from "./ups/index.ts";
import { xpressbees } from "./xpressbees/index.ts";

export const CARRIERS = [
  // One line per folder, in the catalogue's order within a country.
  delhivery,
  bluedart,
  dhl,
  fedex,
  ups,
  dtdc,
  aramex,
  ecomexpress,
  xpressbees,
  track17,
] as const;
