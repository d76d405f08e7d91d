/** Moved to src/jobs/fragment.ts; kept for the re-check claim, which moves onto src/jobs/ next (docs/architecture.md). */
export * from "../jobs/fragment.ts";
