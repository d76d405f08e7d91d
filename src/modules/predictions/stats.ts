/** The read side of `transit_stats` (docs/predictions.md): an in-memory index reloaded every {@link STATS_RELOAD_MS}. */
import type { Db } from "../../db/client.ts";
import { transitStats } from "../../db/schema/index.ts";
import type { StoredCheckpoint } from "../../domain/checkpoint.ts";
import {
  effectiveEta,
  pickStat,
  pickupOf,
  predictDelivery,
  stallThresholdS,
  statKeys,
  utcOffsetMinutes,
  type Basis,
  type PredictedDelivery,
  type TransitStat,
} from "../../domain/predictions.ts";
import { isTerminal, type ShipmentState } from "../../domain/states.ts";

/** How stale the in-memory copy of `transit_stats` may get, ms. */
export const STATS_RELOAD_MS = 5 * 60_000;

/** What a prediction reads of a shipment. */
export interface PredictionInput {
  state: string;
  checkpoints: readonly StoredCheckpoint[];
  originCity: string | null;
  destinationCity: string | null;
  estimatedDelivery?: string | null;
}

/** `transit_stats` by courier, basis, origin and destination. */
export class StatsIndex {
  private readonly byKey = new Map<string, TransitStat>();

  constructor(rows: readonly (TransitStat & { courier: string; origin: string; destination: string })[] = []) {
    for (const r of rows) this.byKey.set(JSON.stringify([r.courier, r.basis, r.origin, r.destination]), r);
  }

  get size(): number {
    return this.byKey.size;
  }

  /** The statistics a shipment could use, most specific first (lane, region, courier); missing ones undefined. */
  candidates(courier: string, originCity: string | null, destinationCity: string | null): (TransitStat | undefined)[] {
    return statKeys(originCity, destinationCity).map(([b, o, d]) => this.byKey.get(JSON.stringify([courier, b, o, d])));
  }

  /** The predicted delivery of a picked-up, unfinished shipment; undefined otherwise or under {@link MIN_SAMPLES}. */
  predict(courier: string, s: PredictionInput): PredictedDelivery | undefined {
    if (isTerminal(s.state as ShipmentState)) return undefined;
    const pickup = pickupOf(s.checkpoints);
    if (!pickup) return undefined;
    const stat = pickStat(this.candidates(courier, s.originCity, s.destinationCity), "transit");
    return predictDelivery(stat, Date.parse(pickup.at), utcOffsetMinutes(s.checkpoints[0]!));
  }

  /** The courier's EDD if it gives one, else the predicted date, else null (`YYYY-MM-DD`). */
  eta(courier: string, s: PredictionInput): string | null {
    return effectiveEta(s.estimatedDelivery ?? null, this.predict(courier, s)?.date);
  }

  /** Seconds without a new checkpoint after which the shipment is stalled (domain/predictions.ts `stallThresholdS`). */
  stallThresholdS(courier: string, originCity: string | null, destinationCity: string | null): number {
    return stallThresholdS(pickStat(this.candidates(courier, originCity, destinationCity), "gap"));
  }
}

/** Reads the whole table (a few rows per courier and lane). */
export async function loadStatsIndex(db: Db): Promise<StatsIndex> {
  const rows = await db.select().from(transitStats);
  return new StatsIndex(rows.map((r) => ({ ...r, basis: r.basis as Basis })));
}

/** The process's copy of `transit_stats`, reloaded in the background when stale; a failed load keeps the last copy. */
export class TransitStatsCache {
  private index: StatsIndex | undefined;
  private loadedMs = 0;
  private loading: Promise<StatsIndex> | undefined;

  constructor(
    private readonly db: Db,
    private readonly now: () => number,
  ) {}

  async get(): Promise<StatsIndex> {
    const stale = this.now() - this.loadedMs >= STATS_RELOAD_MS || this.now() < this.loadedMs;
    if (this.index && !stale) return this.index;
    const load = this.reload();
    return this.index ?? (await load);
  }

  /** Forgets the copy: the next `get()` loads again (after a rebuild in this process). */
  invalidate(): void {
    this.index = undefined;
    this.loadedMs = 0;
  }

  private reload(): Promise<StatsIndex> {
    this.loading ??= loadStatsIndex(this.db)
      .then((ix) => {
        this.index = ix;
        this.loadedMs = this.now();
        return ix;
      })
      .catch(() => this.index ?? new StatsIndex())
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  stop(): void {
    this.invalidate();
  }
}
