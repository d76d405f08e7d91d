/** Each courier's state as this process last read it, for the `/v1/couriers` items and the tracking warning. */
import type { Db } from "../../db/client.ts";
import type { Clock } from "../../lib/clock.ts";
import type { HealthSummary } from "../couriers/service.ts";
import { isoSecond } from "./event.ts";
import { healthRows } from "./read.ts";

/** How long a read serves before the next request reloads it, ms (the evaluation runs once a minute). */
const HEALTH_CACHE_MS = 15_000;
const UNKNOWN: HealthSummary = { state: "unknown", since: null, success_share_15m: null, p95_ms_15m: null };

/** A service (src/services.ts): answers synchronously from the last read and reloads in the background. */
export class HealthCache {
  private rows = new Map<string, HealthSummary>();
  private loadedAt = -Infinity;
  private loading: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** The courier's summary as last read (unknown before the first read); starts a reload when stale. */
  summary(slug: string): HealthSummary {
    if (!this.stopped && this.clock.now() - this.loadedAt >= HEALTH_CACHE_MS)
      void this.refresh().catch(() => undefined);
    return this.rows.get(slug) ?? UNKNOWN;
  }

  /** Reads every courier's row now. @throws the database's errors */
  async refresh(): Promise<void> {
    if (this.loading) return this.loading;
    this.loadedAt = this.clock.now();
    this.loading = (async () => {
      const rows = await healthRows(this.db);
      const next = new Map<string, HealthSummary>();
      for (const [slug, r] of rows)
        next.set(slug, {
          state: r.state,
          since: isoSecond(r.since),
          success_share_15m: r.figures.windows?.["15m"]?.success_share ?? null,
          p95_ms_15m: r.figures.windows?.["15m"]?.p95_ms ?? null,
        });
      this.rows = next;
    })().finally(() => (this.loading = undefined));
    return this.loading;
  }

  stop(): void {
    this.stopped = true;
    this.rows.clear();
  }
}
