export * from "./accounts.ts";
export * from "./shipments.ts";
export * from "./webhooks.ts";
export * from "./billing.ts";
export * from "./ops.ts";
export * from "./features.ts";
export * from "./links.ts";
export * from "./couriers.ts";
