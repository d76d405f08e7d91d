/** The read side of `transit_stats` (docs/predictions.md): an in-memory index reloaded every {@link STATS_RELOAD_MS}. */
import type { Db } from "../../db/client.ts";
import { transitStats } from "../../db/schema/index.ts";
import type { StoredCheckpoint } from "../../domain/checkpoint.ts";
import { estimateDelivery, type Estimate } from "../../domain/estimates.ts";
import { canonicalCity, type Place } from "../../domain/places.ts";
import {
  effectiveEta,
  MIN_SAMPLES,
  pinKeys,
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
const STATS_RELOAD_MS = 5 * 60_000;

/** What a prediction reads of a shipment. */
export interface PredictionInput {
  state: string;
  checkpoints: readonly StoredCheckpoint[];
  originCity: string | null;
  destinationCity: string | null;
  estimatedDelivery?: string | null;
  /** Indian PINs when known: they add the pincode lane and the postal region (docs/predictions.md). */
  originPincode?: string | null;
  destinationPincode?: string | null;
}

/** `transit_stats` by courier, basis, origin and destination. */
export class StatsIndex {
  private readonly byKey = new Map<string, TransitStat>();
  /** City lanes by courier and canonical city pair (`canonicalCity`): of several spellings, the most samples. */
  private readonly byCanonicalLane = new Map<string, TransitStat>();
  /** Couriers whose courier-wide row holds at least {@link MIN_SAMPLES} deliveries, sorted. */
  private readonly withHistory: string[] = [];

  constructor(rows: readonly (TransitStat & { courier: string; origin: string; destination: string })[] = []) {
    for (const r of rows) {
      this.byKey.set(JSON.stringify([r.courier, r.basis, r.origin, r.destination]), r);
      if (r.basis === "courier" && r.transitCount >= MIN_SAMPLES) this.withHistory.push(r.courier);
      if (r.basis !== "lane") continue;
      const k = JSON.stringify([r.courier, canonicalCity(r.origin), canonicalCity(r.destination)]);
      const had = this.byCanonicalLane.get(k);
      if (!had || had.transitCount < r.transitCount) this.byCanonicalLane.set(k, r);
    }
    this.withHistory.sort();
  }

  /** Couriers whose courier-wide statistics hold at least {@link MIN_SAMPLES} deliveries. */
  couriersWithHistory(): readonly string[] {
    return this.withHistory;
  }

  /**
   * The statistics an estimate between two places could use, most specific first: the pincode lane (both PINs), the
   * city lane (both cities, any spelling), the destination's region (its PIN's postal region), the courier.
   */
  estimateCandidates(courier: string, origin: Place, destination: Place): (TransitStat | undefined)[] {
    const get = (b: Basis, o: string, d: string) => this.byKey.get(JSON.stringify([courier, b, o, d]));
    const pins = pinKeys(
      origin.kind === "pincode" ? origin.pincode : null,
      destination.kind === "pincode" ? destination.pincode : null,
    );
    const out: (TransitStat | undefined)[] = [];
    if (pins.lane) out.push(get("pincode_lane", ...pins.lane));
    if (origin.kind === "city" && destination.kind === "city")
      out.push(this.byCanonicalLane.get(JSON.stringify([courier, origin.city, destination.city])));
    if (pins.region) out.push(get("region", "", pins.region));
    out.push(get("courier", "", ""));
    return out;
  }

  /** The estimate of `courier` between two places for `shipDate`; undefined without {@link MIN_SAMPLES} on any basis. */
  estimate(courier: string, origin: Place, destination: Place, shipDate: string): Estimate | undefined {
    return estimateDelivery(pickStat(this.estimateCandidates(courier, origin, destination), "transit"), shipDate);
  }

  get size(): number {
    return this.byKey.size;
  }

  /** The statistics a shipment could use, most specific first (lane, region, courier); missing ones undefined. */
  candidates(
    courier: string,
    originCity: string | null,
    destinationCity: string | null,
    originPincode?: string | null,
    destinationPincode?: string | null,
  ): (TransitStat | undefined)[] {
    return statKeys(originCity, destinationCity, originPincode, destinationPincode).map(([b, o, d]) =>
      this.byKey.get(JSON.stringify([courier, b, o, d])),
    );
  }

  /** The predicted delivery of a picked-up, unfinished shipment; undefined otherwise or under {@link MIN_SAMPLES}. */
  predict(courier: string, s: PredictionInput): PredictedDelivery | undefined {
    if (isTerminal(s.state as ShipmentState)) return undefined;
    const pickup = pickupOf(s.checkpoints);
    const newest = s.checkpoints[0];
    if (!pickup || !newest) return undefined;
    const stat = pickStat(
      this.candidates(courier, s.originCity, s.destinationCity, s.originPincode, s.destinationPincode),
      "transit",
    );
    return predictDelivery(stat, Date.parse(pickup.at), utcOffsetMinutes(newest));
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
