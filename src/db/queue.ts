/** Moved to src/jobs/queue.ts; kept for the re-check claim, which moves onto src/jobs/ next (docs/architecture.md). */
export * from "../jobs/queue.ts";
export * from "../jobs/leases.ts";
