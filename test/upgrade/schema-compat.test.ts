/**
 * Expand/contract (docs/releases.md, "Upgrades"): this code's migrations leave every table and column the previous
 * release uses in place, with its type, so the previous release's processes keep working on the migrated database
 * during a rolling deploy and after a rollback of the code. The previous release's schema is its fixture's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { migrateDatabase } from "../../src/db/migrate.ts";
import type { TestDatabase } from "../helpers/db.ts";
import { exceptionsFor } from "./exceptions.ts";
import { compatibilityProblems, previousRelease, restoreFixture, schemaOf, type SchemaShape } from "./support.ts";

const fixture = previousRelease();
let tdb: TestDatabase;
let previous: SchemaShape;
let head: SchemaShape;

beforeAll(async () => {
  tdb = await restoreFixture(fixture);
  previous = await schemaOf(tdb.sql);
  await migrateDatabase(tdb.url);
  head = await schemaOf(tdb.sql);
});
afterAll(async () => {
  await tdb?.drop();
});

test(`this code's migrations keep every table and column of ${fixture.version} (documented exceptions aside)`, () => {
  expect(Object.keys(previous).length).toBeGreaterThan(10);
  expect(compatibilityProblems(previous, head, exceptionsFor(fixture.version))).toEqual([]);
});

/** The schema after `ddl` ran on the migrated database, rolled back afterwards. */
async function schemaAfter(ddl: string): Promise<SchemaShape> {
  let shape: SchemaShape = {};
  await tdb.sql
    .begin(async (tx) => {
      await tx.unsafe(ddl);
      shape = await schemaOf(tx);
      throw new Error("rollback");
    })
    .catch((e: Error) => {
      if (e.message !== "rollback") throw e;
    });
  return shape;
}

describe("the check refuses a migration that the previous release cannot run against", () => {
  // [what, the migration's DDL, the problems reported ("|" between two)]
  const cases: [string, string, string][] = [
    [
      "a dropped column",
      "alter table follows drop column reference",
      "column follows.reference was dropped or renamed",
    ],
    [
      "a renamed column",
      "alter table webhooks rename column url to endpoint",
      "column webhooks.url was dropped or renamed|column webhooks.endpoint was added NOT NULL without a default",
    ],
    [
      "a retyped column",
      "alter table webhooks alter column failure_count type bigint",
      "column webhooks.failure_count was retyped from integer to bigint",
    ],
    ["a dropped table", "drop table alert_settings", "table alert_settings was dropped or renamed"],
    ["a renamed table", "alter table sessions rename to dashboard_sessions", "table sessions was dropped or renamed"],
    [
      "a column made NOT NULL",
      "update webhooks set description = '' where description is null; alter table webhooks alter column description set not null",
      "column webhooks.description was made NOT NULL",
    ],
    [
      "a NOT NULL column without a default (the previous release's inserts leave it out)",
      "alter table demo_hits add column region text not null",
      "column demo_hits.region was added NOT NULL without a default",
    ],
  ];
  for (const [what, ddl, problem] of cases)
    test(what, async () => {
      expect(compatibilityProblems(previous, await schemaAfter(ddl))).toEqual(problem.split("|"));
    });

  test("additive changes pass: a new table, a nullable column, a column with a default, an index", async () => {
    const after = await schemaAfter(`
      create table release_notes (id text primary key, body text not null);
      alter table follows add column label text;
      alter table webhooks add column version integer not null default 1;
      create index follows_label_idx on follows (label)`);
    expect(after.release_notes).toBeDefined();
    expect(compatibilityProblems(previous, after)).toEqual([]);
  });

  test("a documented exception lets a contract step through, and only that one", async () => {
    const after = await schemaAfter(
      "alter table follows drop column reference; alter table follows drop column metadata",
    );
    const exception = { release: fixture.version, table: "follows", column: "reference", reason: "test" };
    expect(compatibilityProblems(previous, after, [exception])).toEqual([
      "column follows.metadata was dropped or renamed",
    ]);
  });
});
