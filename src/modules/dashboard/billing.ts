/**
 * The dashboard's view of billing: the provider interface lives in the
 * billing module (src/modules/billing/provider.ts); re-exported here for the
 * dashboard's routes and tests.
 */
export { sandboxBilling, type BillingProvider, type BillingState, type PlanChangeDecision, type PlanChangeRequest } from "../billing/provider.ts";
