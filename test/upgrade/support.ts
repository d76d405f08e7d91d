/**
 * The previous release's database for the upgrade tests: the newest fixture under test/upgrade/<version>/
 * (scripts/release/fixture.ts writes one per release), restored with psql into a new database; and the schema
 * comparison that keeps migrations expand/contract (docs/releases.md, "Upgrades").
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import postgres from "postgres";
import { connect } from "../../src/db/client.ts";
import { DUMP_FILE, FIXTURES_DIR, MANIFEST_FILE, ROOT, type FixtureManifest } from "../../scripts/release/fixture.ts";
import { ADMIN_URL, type TestDatabase } from "../helpers/db.ts";

const semver = (v: string) => v.split(/[.-]/).map((p) => Number(p));
const compareVersions = (a: string, b: string) => {
  const [x, y] = [semver(a), semver(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
};

/** The release versions that have a fixture, oldest first. */
export function fixtureVersions(): string[] {
  return readdirSync(FIXTURES_DIR, { withFileTypes: true })
    .filter(
      (d) => d.isDirectory() && /^\d+\.\d+\.\d+$/.test(d.name) && existsSync(join(FIXTURES_DIR, d.name, DUMP_FILE)),
    )
    .map((d) => d.name)
    .sort(compareVersions);
}

export interface Fixture {
  version: string;
  manifest: FixtureManifest;
  /** The dump as SQL text. */
  sql: string;
}

/** The newest release's fixture: the database an upgrade to this code starts from. */
export function previousRelease(): Fixture {
  const version = fixtureVersions().at(-1);
  if (!version) throw new Error(`no fixture under ${FIXTURES_DIR}`);
  const dir = join(FIXTURES_DIR, version);
  return {
    version,
    manifest: JSON.parse(readFileSync(join(dir, MANIFEST_FILE), "utf8")),
    sql: gunzipSync(readFileSync(join(dir, DUMP_FILE))).toString("utf8"),
  };
}

const adminUrlFor = (name: string) => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
};

/**
 * A new database holding `fixture`'s dump, loaded by psql as an operator restores a plain dump.
 * @throws when psql reports an error (ON_ERROR_STOP).
 */
export async function restoreFixture(fixture: Fixture): Promise<TestDatabase> {
  const name = `ct_up_${Bun.randomUUIDv7().replaceAll("-", "").slice(-16)}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const url = adminUrlFor(name);
  const psql = spawnSync("psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", "--single-transaction", "-d", url], {
    input: fixture.sql,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const drop = async () => {
    const a = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    try {
      await a.unsafe(`drop database if exists "${name}" with (force)`);
    } finally {
      await a.end({ timeout: 5 });
    }
  };
  if (psql.status !== 0) {
    await drop();
    throw new Error(`psql could not restore the ${fixture.version} fixture (${psql.status}): ${psql.stderr}`);
  }
  const { db, sql } = connect(url, { max: 4 });
  return {
    name,
    url,
    db,
    sql,
    drop: async () => {
      await sql.end({ timeout: 5 });
      await drop();
    },
  };
}

/**
 * The code of `commit` (a previous release's) extracted from git into a temporary folder, with this checkout's
 * node_modules linked in; undefined when the clone does not have that commit (a shallow clone).
 */
export function previousCode(commit: string | undefined): string | undefined {
  if (!commit || spawnSync("git", ["cat-file", "-e", `${commit}^{commit}`], { cwd: ROOT }).status !== 0)
    return undefined;
  const dir = mkdtempSync(join(tmpdir(), "ct-previous-"));
  const archive = spawnSync("git", ["archive", "--format=tar", "-o", join(dir, "code.tar"), commit], { cwd: ROOT });
  if (archive.status !== 0 || spawnSync("tar", ["-xf", "code.tar"], { cwd: dir }).status !== 0)
    throw new Error(`could not extract ${commit}: ${archive.stderr}`);
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

/** A column as a client of the schema sees it. */
export interface ColumnShape {
  type: string;
  nullable: boolean;
  hasDefault: boolean;
}
/** Tables of the public schema (partitions left out: they are the parent's storage) → columns. */
export type SchemaShape = Record<string, Record<string, ColumnShape>>;

/** The shape of the public schema of the database behind `sql`. */
export async function schemaOf(sql: postgres.Sql | postgres.TransactionSql): Promise<SchemaShape> {
  const rows = await sql<{ tbl: string; col: string; type: string; not_null: boolean; has_default: boolean }[]>`
    select c.relname as tbl, a.attname as col, format_type(a.atttypid, a.atttypmod) as type,
           a.attnotnull as not_null, (a.atthasdef or a.attidentity <> '' or a.attgenerated <> '') as has_default
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid
    join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition
      and a.attnum > 0 and not a.attisdropped
    order by 1, a.attnum`;
  const shape: SchemaShape = {};
  for (const r of rows) {
    shape[r.tbl] ??= {};
    shape[r.tbl]![r.col] = { type: r.type, nullable: !r.not_null, hasDefault: r.has_default };
  }
  return shape;
}

/**
 * A change the previous release cannot run against, allowed on purpose: a contract step taken once no process
 * of the named release runs (docs/releases.md, "Upgrades"). `column` absent: the whole table.
 */
export interface CompatException {
  /** The release whose fixture the exception applies to. */
  release: string;
  table: string;
  column?: string;
  reason: string;
}

/**
 * What in `head` breaks code written against `previous` during a rolling deploy and after a rollback: a table or
 * column dropped or renamed (a rename shows as a drop), a column retyped or made NOT NULL, and a NOT NULL column
 * without a default added to an existing table (the previous release's inserts leave it out). `exceptions` are
 * the documented contract steps. Returns one line per problem, empty when compatible.
 */
export function compatibilityProblems(
  previous: SchemaShape,
  head: SchemaShape,
  exceptions: readonly CompatException[] = [],
): string[] {
  const excepted = (table: string, column?: string) =>
    exceptions.some((e) => e.table === table && (e.column === undefined || e.column === column));
  const problems: string[] = [];
  for (const [table, columns] of Object.entries(previous)) {
    const now = head[table];
    if (!now) {
      if (!excepted(table)) problems.push(`table ${table} was dropped or renamed`);
      continue;
    }
    for (const [column, was] of Object.entries(columns)) {
      if (excepted(table, column)) continue;
      const is = now[column];
      if (!is) problems.push(`column ${table}.${column} was dropped or renamed`);
      else if (is.type !== was.type)
        problems.push(`column ${table}.${column} was retyped from ${was.type} to ${is.type}`);
      else if (was.nullable && !is.nullable) problems.push(`column ${table}.${column} was made NOT NULL`);
    }
    for (const [column, is] of Object.entries(now))
      if (!columns[column] && !is.nullable && !is.hasDefault && !excepted(table, column))
        problems.push(`column ${table}.${column} was added NOT NULL without a default`);
  }
  return problems;
}
