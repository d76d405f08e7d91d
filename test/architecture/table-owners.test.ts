/**
 * Every table is written by exactly one folder of src/, its owner (docs/spec-map.md, "Table owners";
 * docs/architecture.md). Other folders read it, or call the owner's functions to change it. The writes are found
 * by scripts/table-writers.ts (drizzle insert/update/delete on a schema table, imported by name, through a namespace
 * import or an alias; raw SQL in templates).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { findTableWriters, ownerProblems, rawSqlWrites, readSchemaTables } from "../../scripts/table-writers.ts";

/** table → the one folder that writes it. */
const OWNERS: Readonly<Record<string, string>> = {
  accounts: "src/modules/accounts",
  api_keys: "src/modules/accounts",
  usage_counters: "src/modules/accounts",
  usage_daily: "src/modules/accounts",
  rate_windows: "src/modules/accounts",
  demo_hits: "src/modules/accounts",
  password_links: "src/modules/accounts",
  sessions: "src/modules/dashboard",
  shipments: "src/modules/following",
  shipment_checkpoint_chunks: "src/modules/following",
  follows: "src/modules/following",
  events: "src/modules/following",
  recheck_queue: "src/modules/following",
  recheck_schedule: "src/modules/following",
  recheck_chunks: "src/modules/following",
  webhooks: "src/modules/webhooks",
  deliveries: "src/modules/webhooks",
  delivery_queue: "src/modules/webhooks",
  delivery_attempts: "src/modules/webhooks",
  webhook_sequences: "src/modules/webhooks",
  upgrade_requests: "src/modules/billing",
  billing_subscriptions: "src/modules/billing",
  stripe_events: "src/modules/billing",
  idempotency_keys: "src/http",
  service_settings: "src/db",
  courier_budgets: "src/modules/couriers",
  alerts: "src/modules/alerts",
  alert_settings: "src/modules/alerts",
  alert_windows: "src/modules/alerts",
  alert_address_links: "src/modules/alerts",
  transit_stats: "src/modules/predictions",
  courier_call_buckets: "src/modules/courier-health",
  courier_health: "src/modules/courier-health",
  courier_incidents: "src/modules/courier-health",
  account_branding: "src/modules/public-page",
  public_page_views: "src/modules/public-page",
  shipment_actions: "src/modules/actions",
};

const root = join(import.meta.dir, "..", "..");

describe("table owners", () => {
  test("every table of the schema is written by its declared owner and by nobody else", () => {
    const tables = new Set(readSchemaTables(root).values());
    expect(tables.size).toBeGreaterThanOrEqual(20);
    expect(ownerProblems(findTableWriters(root), OWNERS, tables)).toEqual([]);
  });

  test('docs/spec-map.md lists the same owners (section "Table owners")', () => {
    const doc = readFileSync(join(root, "docs", "spec-map.md"), "utf8");
    const section = doc.slice(doc.indexOf("## Table owners"));
    const end = section.indexOf("\n## ", 3);
    const rows = [...(end > 0 ? section.slice(0, end) : section).matchAll(/^\| `([a-z_]+)` \| `(src\/[a-z/-]+)` \|/gm)];
    expect(Object.fromEntries(rows.map((m) => [m[1], m[2]]))).toEqual({ ...OWNERS });
  });
});

describe("the check fails on a second writer", () => {
  const fixture = join(import.meta.dir, "fixtures", "writers");
  const tables = new Set(readSchemaTables(fixture).values());

  test("finds drizzle, raw SQL and unsafe() writes, and none in comments, strings, row locks, upserts or Set deletes", () => {
    expect(tables).toEqual(new Set(["parcels", "parcel_notes"]));
    const writers = findTableWriters(fixture);
    expect([...writers].map(([t, by]) => [t, Object.fromEntries(by)])).toEqual([
      [
        "parcels",
        {
          "src/modules/owner": ["src/modules/owner/write.ts:8"],
          "src/modules/intruder": ["src/modules/intruder/write.ts:5"],
        },
      ],
      ["parcel_notes", { "src/modules/owner": ["src/modules/owner/write.ts:9", "src/modules/owner/write.ts:13"] }],
    ]);
  });

  test("a second writer is reported with where it writes", () => {
    expect(
      ownerProblems(
        findTableWriters(fixture),
        { parcels: "src/modules/owner", parcel_notes: "src/modules/owner" },
        tables,
      ),
    ).toEqual([
      "parcels: written by src/modules/intruder (src/modules/intruder/write.ts:5), owner is src/modules/owner",
    ]);
  });

  test("a table without an owner, an owner that writes nothing and an unknown table are reported", () => {
    expect(
      ownerProblems(
        findTableWriters(fixture),
        { parcels: "src/modules/intruder", ghosts: "src/modules/owner" },
        tables,
      ),
    ).toEqual([
      "parcel_notes: in the schema but has no declared owner",
      "ghosts: declared owner src/modules/owner, but no such table in the schema",
      "parcel_notes: written by src/modules/owner (src/modules/owner/write.ts:9, src/modules/owner/write.ts:13), owner is undeclared",
      "parcels: written by src/modules/owner (src/modules/owner/write.ts:8), owner is src/modules/intruder",
    ]);
  });

  test("raw SQL: insert into, update, delete from; not for update, for no key update, do update", () => {
    const t = new Set(["parcels"]);
    expect(rawSqlWrites("INSERT INTO parcels (id) values (1)", t)).toEqual(["parcels"]);
    expect(rawSqlWrites('update "parcels" set hops = 1', t)).toEqual(["parcels"]);
    expect(rawSqlWrites("with d as (delete from parcels where true) select 1", t)).toEqual(["parcels"]);
    expect(rawSqlWrites("select 1 from parcels for update of parcels", t)).toEqual([]);
    expect(rawSqlWrites("select 1 from parcels for no key update", t)).toEqual([]);
    expect(rawSqlWrites("insert into other (k) values (1) on conflict (k) do update set k = 2", t)).toEqual([]);
  });
});

describe("the check sees writes through a namespace import and through aliases", () => {
  const fixture = join(import.meta.dir, "fixtures", "writers-indirect");
  /** table → folder → places, sorted, for a comparison that does not depend on the order files are read in. */
  const byKey = <V>(m: Map<string, V>) => [...m].sort(([a], [b]) => a.localeCompare(b));
  const sorted = (w: ReturnType<typeof findTableWriters>) =>
    Object.fromEntries(
      byKey(w).map(([t, by]) => [t, Object.fromEntries(byKey(by).map(([f, at]) => [f, [...at].sort()]))]),
    );

  test("a renamed re-export in the schema names the same table", () => {
    expect(Object.fromEntries(readSchemaTables(fixture))).toEqual({
      parcels: "parcels",
      parcelNotes: "parcel_notes",
      boxes: "parcels",
    });
  });

  test('schema.t, schema["t"], renamed imports and re-exports, local and destructured aliases are writes; reads through them are not', () => {
    expect(sorted(findTableWriters(fixture))).toEqual({
      parcel_notes: {
        "src/modules/intruder": ["aliased.ts:15", "aliased.ts:9", "namespace.ts:8"].map(
          (f) => `src/modules/intruder/${f}`,
        ),
        "src/modules/owner": ["src/modules/owner/write.ts:8"],
      },
      parcels: {
        "src/modules/intruder": ["aliased.ts:10", "aliased.ts:13", "namespace.ts:7", "namespace.ts:9"].map(
          (f) => `src/modules/intruder/${f}`,
        ),
        "src/modules/owner": ["src/modules/owner/write.ts:7"],
      },
    });
  });

  test("the intruder is reported as a second writer of both tables", () => {
    const tables = new Set(readSchemaTables(fixture).values());
    const owners = { parcels: "src/modules/owner", parcel_notes: "src/modules/owner" };
    const problems = ownerProblems(findTableWriters(fixture), owners, tables).map((p) => p.slice(0, p.indexOf(" (")));
    expect(problems).toEqual([
      "parcel_notes: written by src/modules/intruder",
      "parcels: written by src/modules/intruder",
    ]);
  });
});

describe("the check sees queue tables declared for the claim engine", () => {
  const fixture = join(import.meta.dir, "fixtures", "writers-queue");

  test('defineQueue("table", …) is a write by the calling folder; a string that only mentions it is not', () => {
    const writers = findTableWriters(fixture);
    expect(Object.fromEntries([...writers].map(([t, by]) => [t, Object.fromEntries(by)]))).toEqual({
      parcels: { "src/modules/owner": ["src/modules/owner/queue.ts:4"] },
      parcel_notes: { "src/modules/intruder": ["src/modules/intruder/queue.ts:4"] },
    });
    expect(
      ownerProblems(
        writers,
        { parcels: "src/modules/owner", parcel_notes: "src/modules/owner" },
        new Set(readSchemaTables(fixture).values()),
      ),
    ).toEqual([
      "parcel_notes: declared owner src/modules/owner writes it nowhere",
      "parcel_notes: written by src/modules/intruder (src/modules/intruder/queue.ts:4), owner is src/modules/owner",
    ]);
  });
});
