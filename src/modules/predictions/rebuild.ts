/** The daily rebuild of `transit_stats` in short batched statements (Why: docs/predictions.md#rebuild). */
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { transitStats } from "../../db/schema/index.ts";
import {
  GAP_BUCKET_S,
  histogramQuantile,
  regionOf,
  pinKeys,
  STATS_WINDOW_DAYS,
  TRANSIT_BUCKET_S,
  type Basis,
} from "../../domain/predictions.ts";

export interface RebuildOptions {
  /** Shipment ids per batch statement (default 2,000: about 0.3 s each on a busy 2-core machine). */
  batchSize?: number;
}

export interface RebuildResult {
  /** Delivered shipments counted (with a pickup before their delivery). */
  deliveries: number;
  rows: number;
  batches: number;
  ms: number;
}

type Histogram = Map<number, number>;
interface Acc {
  transit: Histogram;
  gap: Histogram;
  deliveries: number;
  gaps: number;
}

const add = (h: Histogram, b: number, n: number) => h.set(b, (h.get(b) ?? 0) + n);

interface BatchRow {
  courier: string;
  o: string;
  d: string;
  /** Origin and destination PIN, "" when unknown. */
  op: string;
  dp: string;
  kind: "t" | "g";
  bucket: number;
  n: number;
}

/**
 * One batch: ids in (`after`, `upto`] (`upto` null: to the end). Transit: first `delivered` minus first past
 * `pending`; gaps between consecutive checkpoints; windows run per shipment so no sort spans the batch.
 */
function batchQuery(db: Db, after: string, upto: string | null, cutoff: string) {
  return db.$client<BatchRow[]>`
    with t as materialized (
      select s.courier, coalesce(lower(btrim(s.origin_city)), '') as o, coalesce(lower(btrim(s.destination_city)), '') as d,
        coalesce(s.origin_pincode, '') as op, coalesce(s.destination_pincode, '') as dp, h.checkpoints, x.transit
      from shipments s
      cross join lateral (select shipment_history(s) as checkpoints) h
      cross join lateral (
        select extract(epoch from min((e->>'at')::timestamptz) filter (where e->>'state' = 'delivered')
          - min((e->>'at')::timestamptz) filter (where e->>'state' <> 'pending')) as transit
        from jsonb_array_elements(h.checkpoints) e
      ) x
      where s.id > ${after} ${upto === null ? db.$client`` : db.$client`and s.id <= ${upto}`}
        and s.state = 'delivered' and s.delivered_at >= ${cutoff} and x.transit > 0
    )
    select courier, o, d, op, dp, 't' as kind, floor(transit / ${TRANSIT_BUCKET_S})::int as bucket, count(*)::int as n
    from t group by 1, 2, 3, 4, 5, 7
    union all
    select t.courier, t.o, t.d, t.op, t.dp, 'g', floor(g.gap / ${GAP_BUCKET_S})::int, count(*)::int
    from t cross join lateral (
      select extract(epoch from a - lag(a) over (order by a)) as gap
      from (select (e->>'at')::timestamptz as a from jsonb_array_elements(t.checkpoints) e) y
    ) g
    where g.gap is not null group by 1, 2, 3, 4, 5, 7`;
}

/**
 * Rebuilds `transit_stats` from deliveries of the STATS_WINDOW_DAYS before `nowMs`; every basis kept (reads apply MIN_SAMPLES).
 * @throws whatever the database throws; the table keeps its previous rows then.
 */
export async function rebuildTransitStats(db: Db, nowMs: number, opts: RebuildOptions = {}): Promise<RebuildResult> {
  const started = performance.now();
  const batchSize = opts.batchSize ?? 2_000;
  const cutoff = new Date(nowMs - STATS_WINDOW_DAYS * 86_400_000).toISOString().slice(0, 10);
  const accs = new Map<string, Acc>();
  const accOf = (courier: string, basis: Basis, o: string, d: string) => {
    const key = JSON.stringify([courier, basis, o, d]);
    let a = accs.get(key);
    if (!a) {
      a = { transit: new Map(), gap: new Map(), deliveries: 0, gaps: 0 };
      accs.set(key, a);
    }
    return a;
  };
  let after = "";
  let batches = 0;
  let deliveries = 0;
  for (;;) {
    const [edge] = await db.$client<
      { id: string }[]
    >`select id from shipments where id > ${after} order by id offset ${batchSize - 1} limit 1`;
    const upto = edge?.id ?? null;
    const rows = await batchQuery(db, after, upto, cutoff);
    batches++;
    for (const r of rows) {
      const region = regionOf(r.d);
      const targets = [accOf(r.courier, "courier", "", "")];
      if (r.o && r.d) targets.push(accOf(r.courier, "lane", r.o, r.d));
      const pins = pinKeys(r.op, r.dp);
      if (pins.lane) targets.push(accOf(r.courier, "pincode_lane", pins.lane[0], pins.lane[1]));
      if (pins.region) targets.push(accOf(r.courier, "region", "", pins.region));
      if (region && region !== pins.region) targets.push(accOf(r.courier, "region", "", region));
      for (const a of targets) {
        if (r.kind === "t") {
          add(a.transit, r.bucket, r.n);
          a.deliveries += r.n;
        } else {
          add(a.gap, r.bucket, r.n);
          a.gaps += r.n;
        }
      }
      if (r.kind === "t") deliveries += r.n;
    }
    if (upto === null) break;
    after = upto;
  }
  const rebuiltAt = new Date(nowMs);
  const values = [...accs]
    .map(([key, a]) => {
      const [courier, basis, origin, destination] = JSON.parse(key) as [string, Basis, string, string];
      const tq = (q: number) => histogramQuantile(a.transit, q, TRANSIT_BUCKET_S);
      const gq = (q: number) => (a.gaps > 0 ? histogramQuantile(a.gap, q, GAP_BUCKET_S) : null);
      return {
        courier,
        basis,
        origin,
        destination,
        rebuiltAt,
        transitP05: tq(0.05),
        transitP10: tq(0.1),
        transitP25: tq(0.25),
        transitP50: tq(0.5),
        transitP75: tq(0.75),
        transitP90: tq(0.9),
        transitP95: tq(0.95),
        transitCount: a.deliveries,
        gapP50: gq(0.5),
        gapP90: gq(0.9),
        gapP95: gq(0.95),
        gapCount: a.gaps,
      };
    })
    .filter((v) => v.transitCount > 0);
  await db.transaction(async (tx) => {
    await tx.execute(sql`delete from transit_stats`);
    for (let i = 0; i < values.length; i += 1_000) await tx.insert(transitStats).values(values.slice(i, i + 1_000));
  });
  return { deliveries, rows: values.length, batches, ms: Math.round(performance.now() - started) };
}
