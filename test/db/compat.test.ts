/**
 * Which storage layout may still run against a database (src/db/compat.ts): a database this build creates is at
 * this build's level; one migrated from the previous release's fixture stays at 1 until `admin contract`.
 */
import { afterAll, expect, test } from "bun:test";
import { runCli } from "../../src/cli/admin.ts";
import { loadConfig } from "../../src/configure.ts";
import { COMPAT_LEVEL, compatLevel, compatView, FIRST_LEVEL } from "../../src/db/compat.ts";
import { migrateDatabase } from "../../src/db/migrate.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { previousRelease, restoreFixture } from "../upgrade/support.ts";

const dbs: TestDatabase[] = [];
afterAll(async () => {
  for (const d of dbs) await d.drop();
});

const cli = async (url: string, argv: string[]) => {
  const out: string[] = [];
  const code = await runCli(argv, () => loadConfig({ DATABASE_URL: url }), {
    out: (l) => out.push(l),
    err: (l) => out.push(l),
  });
  return { code, json: JSON.parse(out.at(-1)!) };
};

test("a database this build created is at this build's level: nothing old is written", async () => {
  const tdb = await createTestDatabase();
  dbs.push(tdb);
  expect(await compatLevel(tdb.db)).toBe(COMPAT_LEVEL);
  await migrateDatabase(tdb.url); // at head: a no-op that leaves the level alone
  expect(await compatLevel(tdb.db)).toBe(COMPAT_LEVEL);
  expect(await compatView(tdb.db, () => 0).legacy(COMPAT_LEVEL)).toBe(false);
});

test("the previous release's database stays at level 1 after migrating; contract raises it, a later start keeps it", async () => {
  const tdb = await restoreFixture(previousRelease());
  dbs.push(tdb);
  await migrateDatabase(tdb.url);
  expect(await compatLevel(tdb.db)).toBe(FIRST_LEVEL);
  expect(await cli(tdb.url, ["show-compat"])).toEqual({
    code: 0,
    json: { compat_level: FIRST_LEVEL, build_level: COMPAT_LEVEL },
  });
  // A structure moved at this build's level, on a database an older layout still uses:
  await tdb.sql`update service_settings set value = ${String(COMPAT_LEVEL - 1)} where name = 'compat_level'`;
  let now = 0;
  const view = compatView(tdb.db, () => now, 30_000);
  expect(await view.legacy(COMPAT_LEVEL)).toBe(true);

  expect(await cli(tdb.url, ["contract"])).toMatchObject({
    code: 0,
    json: { compat_level: COMPAT_LEVEL, previous: COMPAT_LEVEL - 1 },
  });
  await migrateDatabase(tdb.url);
  expect(await compatLevel(tdb.db)).toBe(COMPAT_LEVEL);
  expect(await view.legacy(COMPAT_LEVEL)).toBe(true); // a process reads the level at most every 30 s
  now = 30_000;
  expect(await view.legacy(COMPAT_LEVEL)).toBe(false);
});

test("contract never lowers the level", async () => {
  const tdb = await createTestDatabase();
  dbs.push(tdb);
  await tdb.sql`update service_settings set value = ${String(COMPAT_LEVEL + 5)} where name = 'compat_level' returning 1`.then(
    (r) => expect(r.length).toBe(1),
  );
  expect((await cli(tdb.url, ["contract"])).json).toMatchObject({
    compat_level: COMPAT_LEVEL + 5,
    previous: COMPAT_LEVEL + 5,
  });
});
