/**
 * The courier registry: every courier folder, one line each (README.md, "Adding a courier"). The catalogue, the
 * adapters, the rate budgets, the NDR reasons, the courier variables and the simulator's twins derive from it.
 * A line loads its folder's declaration where it stands, so adding a courier touches this file once.
 */
export const CARRIERS = [
  // One line per folder, in the catalogue's order within a country.
  (await import("./delhivery/index.ts")).delhivery,
  (await import("./bluedart/index.ts")).bluedart,
  (await import("./dhl/index.ts")).dhl,
  (await import("./fedex/index.ts")).fedex,
  (await import("./ups/index.ts")).ups,
  (await import("./dtdc/index.ts")).dtdc,
  (await import("./aramex/index.ts")).aramex,
  (await import("./ecomexpress/index.ts")).ecomexpress,
  (await import("./xpressbees/index.ts")).xpressbees,
  (await import("./track17/index.ts")).track17,
] as const;
