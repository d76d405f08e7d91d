/**
 * In-process jobs (STYLE habit 7): explicit `start()` / `stop({ timeout })`,
 * started by `main.ts` only for ROLE=all|worker, never by `buildApp()`.
 * (Stub: the re-check and housekeeping jobs are filled in by the following work.)
 */
import type { AppDeps } from "../app.ts";

export interface Scheduler {
  start(): Promise<void>;
  /** Stops the jobs and waits for running ones, at most `timeout` ms. */
  stop(opts?: { timeout?: number }): Promise<void>;
}

export function createScheduler(_deps: AppDeps): Scheduler {
  return { start: async () => {}, stop: async () => {} };
}
