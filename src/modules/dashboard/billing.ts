/** The billing module's provider interface, re-exported for the dashboard's routes and tests. */
export type { BillingProvider, BillingState } from "../billing/provider.ts";
