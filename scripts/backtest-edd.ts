/**
 * `bun run backtest:edd [--rebuild] [--generated N]` (docs/predictions.md, "Backtest"): per courier, the share
 * of deliveries inside the predicted [earliest, latest] and the median absolute error of the predicted day, beside
 * the courier's own EDD. Without `--generated`: the stored delivered shipments of the database (DATABASE_URL or
 * the embedded one), with the stored statistics (`--rebuild` rebuilds them first). With `--generated N`: a
 * throw-away database (TEST_PG_URL) holding N generated deliveries with known per-lane distributions, rebuilt, and
 * 10,000 fresh deliveries of the same lanes replayed. Each run also prints the pre-purchase estimate's accuracy per
 * basis (`GET /v1/estimates`: pincode lane, city lane, region, courier); the generated lanes carry PINs, two sorting
 * districts per destination city (test/helpers/history.ts `pincodeLanes`).
 */
import { parseArgs } from "node:util";
import { configFromProcess } from "../src/configure.ts";
import { openDatabase } from "../src/db/client.ts";
import { migrateDatabase } from "../src/db/migrate.ts";
import { createLogger } from "../src/lib/log.ts";
import {
  backtest,
  backtestEstimates,
  storedCases,
  type BacktestCase,
  type BacktestFigures,
  type EstimateBasisFigures,
} from "../src/modules/predictions/backtest.ts";
import { rebuildTransitStats } from "../src/modules/predictions/rebuild.ts";
import { loadStatsIndex } from "../src/modules/predictions/stats.ts";
import { createTestDatabase } from "../test/helpers/db.ts";
import { generateDeliveries, insertDeliveries, laneModels, pincodeLanes } from "../test/helpers/history.ts";

const { values } = parseArgs({ options: { generated: { type: "string" }, rebuild: { type: "boolean" } } });

const pct = (x: number | null) => (x === null ? "-" : `${(x * 100).toFixed(1)} %`);
const days = (x: number | null) => (x === null ? "-" : String(x));

function print(figures: BacktestFigures[], what: string): void {
  console.log(what);
  console.log(
    "courier       deliveries  predicted  inside p10-p90  median |err| d  lane: n / inside / |err|   courier EDD: n / exact / |err|",
  );
  for (const f of figures)
    console.log(
      `${f.courier.padEnd(13)} ${String(f.deliveries).padStart(10)} ${String(f.predicted).padStart(10)} ${pct(f.insideShare).padStart(15)} ${days(f.medianAbsErrorDays).padStart(15)}` +
        `   ${f.lanePredicted} / ${pct(f.laneInsideShare)} / ${days(f.laneMedianAbsErrorDays)}   ${f.courierEdds} / ${pct(f.courierEddExactShare)} / ${days(f.courierEddMedianAbsErrorDays)}`,
    );
  console.log(JSON.stringify(figures));
}

/** The estimate endpoint's figures per basis (docs/predictions.md, "Backtest"). */
export function printEstimates(figures: EstimateBasisFigures[]): void {
  console.log("estimate (GET /v1/estimates) by basis: estimated  inside p10-p90  median |err| d  answered");
  for (const f of figures)
    console.log(
      `${f.basis.padEnd(13)} ${String(f.estimated).padStart(10)} ${pct(f.insideShare).padStart(15)} ${days(f.medianAbsErrorDays).padStart(15)} ${String(f.answered).padStart(9)}`,
    );
  console.log(JSON.stringify(figures));
}

if (values.generated !== undefined) {
  const n = Number(values.generated);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error("--generated takes a number of deliveries");
  const tdb = await createTestDatabase({ max: 4 });
  try {
    const now = Date.now();
    const lanes = pincodeLanes(laneModels(7));
    await insertDeliveries(tdb.sql, generateDeliveries(lanes, n, now - 3_600_000, 11));
    const r = await rebuildTransitStats(tdb.db, now);
    const cases: BacktestCase[] = generateDeliveries(lanes, 10_000, now, 99).map((d) => ({
      courier: d.lane.courier,
      originCity: d.lane.origin,
      destinationCity: d.lane.destination,
      originPincode: d.lane.originPincode,
      destinationPincode: d.lane.destinationPincode,
      checkpoints: d.checkpoints,
      deliveredOn: d.deliveredOn,
      courierEdd: d.courierEdd,
    }));
    const index = await loadStatsIndex(tdb.db);
    print(
      await backtest(index, cases),
      `generated: ${n} deliveries over ${lanes.length} pincode lanes (rebuild ${r.ms} ms); 10,000 fresh deliveries replayed`,
    );
    printEstimates(await backtestEstimates(index, cases));
  } finally {
    await tdb.drop();
  }
} else {
  const config = configFromProcess();
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    log: createLogger("silent"),
    max: 2,
  });
  try {
    await migrateDatabase(database.url);
    if (values.rebuild) await rebuildTransitStats(database.db, Date.now());
    const index = await loadStatsIndex(database.db);
    print(
      await backtest(index, storedCases(database.db, Date.now())),
      "stored delivered shipments of the last 90 days (in-sample)",
    );
    printEstimates(await backtestEstimates(index, storedCases(database.db, Date.now())));
  } finally {
    await database.close();
  }
}
