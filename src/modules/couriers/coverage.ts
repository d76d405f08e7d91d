/** Whether each courier budget covers its followed shipments (docs/capacity.md#courier-rate-budgets). */
import type { Config } from "../../config/index.ts";
import type { Db } from "../../db/client.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/log.ts";
import { setBudgetCoverage } from "../metrics/registry.ts";
import { ensureBudgetRows, recheckCallsPerDay, type Budget } from "./budget.ts";
import { COURIERS } from "./catalogue.ts";

/** How often the followed shipments are counted, by one process for all, ms. */
const COUNT_EVERY_MS = 5 * 60_000;
/** How often each process reads the counts, ms. */
const READ_EVERY_MS = 60_000;

/** A courier's budget as `/v1/couriers` shows it. */
export interface BudgetView {
  per_second: number;
  /** Calls per UTC day; null: no daily limit. */
  per_day: number | null;
  /** Whether the re-checks the budget allows cover the followed shipments; null until first counted. */
  covers_followed: boolean | null;
}

export class BudgetCoverage {
  private readonly followed = new Map<string, number>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, "recheckIntervalSeconds">,
    private readonly budgets: readonly Budget[],
    private readonly log: Logger,
    private readonly clock: Clock,
  ) {}

  /** `b`'s view from a followed count (undefined: not counted yet). */
  static viewOf(b: Budget, followed: number | undefined, config: Pick<Config, "recheckIntervalSeconds">): BudgetView {
    const per_day = b.limit.perDay > 0 ? b.limit.perDay : null;
    if (followed === undefined) return { per_second: b.limit.perSecond, per_day, covers_followed: null };
    return { per_second: b.limit.perSecond, per_day, covers_followed: BudgetCoverage.ratio(b, followed, config) >= 1 };
  }

  /** Re-check calls the budget allows per day ÷ those `followed` shipments need (a shipment needs 86,400 / interval). */
  static ratio(b: Budget, followed: number, config: Pick<Config, "recheckIntervalSeconds">): number {
    const needed = (followed * 86_400) / config.recheckIntervalSeconds;
    return recheckCallsPerDay(b) / Math.max(1, needed);
  }

  view(b: Budget): BudgetView {
    return BudgetCoverage.viewOf(b, this.followed.get(b.key), this.config);
  }

  /** Counts when this process's turn (see the file comment), then reads every budget's count; sets the gauge. */
  async refresh(): Promise<void> {
    const keys = [...new Set(this.budgets.map((b) => b.key))];
    if (keys.length === 0) return;
    const sql = this.db.$client;
    await ensureBudgetRows(this.db, this.budgets, this.clock.now());
    const mine = await sql<{ key: string }[]>`
      update courier_budgets set coverage_at = now()
      where key in ${sql(keys)} and (coverage_at is null or coverage_at < now() - make_interval(secs => ${COUNT_EVERY_MS / 1000}))
      returning key`;
    if (mine.length > 0) {
      const rows = await sql<
        { courier: string; n: number }[]
      >`select courier, count(*)::int as n from (select courier from recheck_schedule union all select courier from recheck_queue) q group by courier`;
      const byAdapter = new Map<string, number>();
      for (const r of rows) {
        const adapter = COURIERS.find((c) => c.slug === r.courier && c.follow === "scheduled")?.adapter;
        if (adapter) byAdapter.set(adapter, (byAdapter.get(adapter) ?? 0) + Number(r.n));
      }
      const counted = mine.map((m) => ({ key: m.key, n: byAdapter.get(m.key.slice(0, m.key.indexOf(":"))) ?? 0 }));
      await sql`
        update courier_budgets u set followed = c.n
        from unnest(${counted.map((c) => c.key)}::text[], ${counted.map((c) => c.n)}::int[]) as c(key, n)
        where u.key = c.key`;
    }
    const read = await sql<
      { key: string; followed: number | null }[]
    >`select key, followed from courier_budgets where key in ${sql(keys)}`;
    for (const r of read) if (r.followed !== null) this.followed.set(r.key, Number(r.followed));
    for (const b of this.budgets) {
      const n = this.followed.get(b.key);
      if (n !== undefined) setBudgetCoverage(b.adapter, BudgetCoverage.ratio(b, n, this.config));
    }
  }

  /** Refreshes now and every {@link READ_EVERY_MS}; a failed refresh is logged and tried again next time. */
  start(): void {
    if (this.timer || this.budgets.length === 0) return;
    const run = () =>
      void this.refresh().catch((e) =>
        this.log.warn("courier budget coverage not refreshed", { component: "couriers", error: e as Error }),
      );
    run();
    this.timer = setInterval(run, READ_EVERY_MS);
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
