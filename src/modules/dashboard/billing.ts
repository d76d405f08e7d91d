/** The billing module's provider interface, re-exported for the dashboard's routes and tests. */
export {
  sandboxBilling,
  type BillingProvider,
  type BillingState,
  type PlanChangeDecision,
  type PlanChangeRequest,
} from "../billing/provider.ts";
