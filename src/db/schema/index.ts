export * from "./accounts.ts";
export * from "./shipments.ts";
export * from "./webhooks.ts";
