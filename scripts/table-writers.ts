/**
 * Which folder of `src/` writes which table (docs/spec-map.md, "Table owners"; docs/architecture.md). A folder is
 * what the import graph calls one (`src/<dir>`, `src/modules/<name>`; scripts/import-graph.ts `folderOf`).
 *
 * A write is found, with Babel's parser, as:
 * - a drizzle call `.insert(t)`, `.update(t)` or `.delete(t)` whose argument is a table object imported from
 *   `db/schema` (its export name mapped to the table name through the `pgTable("name", …)` declarations);
 * - raw SQL in a tagged template (`sql\`…\``, `tx\`…\``, `db.$client\`…\``) or a string or untagged template passed
 *   to `.unsafe(…)` or drizzle's `sql.raw(…)`:
 *   `insert into <table>`, `update <table>` (not `for update`, `for no key update`, `do update`) or
 *   `delete from <table>`, where `<table>` is a declared table.
 * Comments and ordinary strings are not read. Not found: a table named through `sql.identifier(…)` or a variable,
 * and foreign keys' `on delete cascade` (the database's doing, not a writer's).
 *
 * Usage: `bun scripts/table-writers.ts` prints `table: folder (file:line, …)` for every write;
 * `test/architecture/table-owners.test.ts` checks the result against the declared owners.
 */
import { readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { parse } from "@babel/parser";
import { folderOf } from "./import-graph.ts";
import { tsFiles } from "./sizes.ts";

/** table name → folder → places (`file:line`) that write it. */
export type Writers = Map<string, Map<string, string[]>>;

type Node = { type: string; loc?: { start: { line: number } }; [key: string]: unknown };

/** Export name → table name, from every `export const x = pgTable("name", …)` under `<root>/src/db/schema`. */
export function readSchemaTables(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of tsFiles(join(root, "src", "db", "schema"))) {
    for (const m of readFileSync(file, "utf8").matchAll(/export\s+const\s+(\w+)\s*=\s*pgTable\(\s*["'`](\w+)["'`]/g)) out.set(m[1]!, m[2]!);
  }
  return out;
}

/** SQL write statements; the look-behinds leave out row locks (`for update`, `for no key update`) and upserts (`do update`). */
const RAW_WRITE = /(?<!\bfor\s+)(?<!\bkey\s+)(?<!\bdo\s+)\b(insert\s+into|update|delete\s+from)\s+"?([a-z_][a-z0-9_]*)"?/gi;

/** Tables a piece of SQL text writes (only names in `tables`). */
export function rawSqlWrites(text: string, tables: ReadonlySet<string>): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(RAW_WRITE)) {
    const name = m[2]!.toLowerCase();
    if (tables.has(name)) found.push(name);
  }
  return found;
}

function children(node: Node): Node[] {
  const out: Node[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === "loc" || key.endsWith("Comments")) continue;
    if (Array.isArray(value)) {
      for (const c of value) if (c && typeof c === "object" && typeof (c as Node).type === "string") out.push(c as Node);
    } else if (value && typeof value === "object" && typeof (value as Node).type === "string") out.push(value as Node);
  }
  return out;
}

/** Local name → table name for the schema objects a file imports from `…db/schema…`. */
function schemaImports(program: Node, byExport: Map<string, string>): Map<string, string> {
  const local = new Map<string, string>();
  for (const stmt of program.body as Node[]) {
    if (stmt.type !== "ImportDeclaration" || !/(^|\/)db\/schema(\/|$|\.)/.test(String((stmt.source as Node).value))) continue;
    for (const spec of stmt.specifiers as Node[]) {
      if (spec.type !== "ImportSpecifier") continue;
      const imported = (spec.imported as Node).name ?? (spec.imported as Node).value;
      const table = byExport.get(String(imported));
      if (table) local.set(String((spec.local as Node).name), table);
    }
  }
  return local;
}

/** The text of a string literal or of an untagged template's fixed parts ("" for anything else). */
function literalText(node: Node): string {
  if (node.type === "StringLiteral") return String(node.value);
  if (node.type === "TemplateLiteral") return (node.quasis as Node[]).map((q) => String((q.value as { raw: string }).raw)).join(" ? ");
  return "";
}

/** The tables one file writes, with the line of each write. */
export function fileWrites(text: string, byExport: Map<string, string>): { table: string; line: number }[] {
  const program = (parse(text, { sourceType: "module", plugins: ["typescript"] }) as unknown as { program: Node }).program;
  const imported = schemaImports(program, byExport);
  const tables = new Set(byExport.values());
  const out: { table: string; line: number }[] = [];
  const visit = (node: Node) => {
    const line = node.loc?.start.line ?? 0;
    if (node.type === "CallExpression" && (node.callee as Node).type === "MemberExpression") {
      const method = ((node.callee as Node).property as Node).name;
      const arg = (node.arguments as Node[])[0];
      if ((method === "insert" || method === "update" || method === "delete") && arg?.type === "Identifier" && imported.has(String(arg.name))) out.push({ table: imported.get(String(arg.name))!, line });
      if ((method === "unsafe" || method === "raw") && arg) for (const t of rawSqlWrites(literalText(arg), tables)) out.push({ table: t, line });
    }
    if (node.type === "TaggedTemplateExpression") {
      const quasi = node.quasi as Node;
      const text = (quasi.quasis as Node[]).map((q) => String((q.value as { raw: string }).raw)).join(" ? ");
      for (const t of rawSqlWrites(text, tables)) out.push({ table: t, line });
    }
    for (const c of children(node)) visit(c);
  };
  visit(program);
  return out;
}

/** Every write under `<root>/src`, by table and folder (folders and files relative to `root`). */
export function findTableWriters(root: string): Writers {
  const byExport = readSchemaTables(root);
  const writers: Writers = new Map();
  for (const path of tsFiles(join(root, "src"))) {
    const file = relative(root, path).split(sep).join("/");
    for (const { table, line } of fileWrites(readFileSync(path, "utf8"), byExport)) {
      const folder = folderOf(file);
      const byFolder = writers.get(table) ?? new Map<string, string[]>();
      writers.set(table, byFolder);
      byFolder.set(folder, [...(byFolder.get(folder) ?? []), `${file}:${line}`]);
    }
  }
  return writers;
}

/**
 * What breaks "one writer per table": a table written by a folder other than its declared owner (with where), a
 * declared table that no folder writes, and a table written or declared without being in the schema (or in
 * `owners`). An empty list means every table has exactly its owner as writer.
 */
export function ownerProblems(writers: Writers, owners: Readonly<Record<string, string>>, schemaTables: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  for (const table of [...schemaTables].sort()) if (!(table in owners)) problems.push(`${table}: in the schema but has no declared owner`);
  for (const [table, owner] of Object.entries(owners)) {
    if (!schemaTables.has(table)) problems.push(`${table}: declared owner ${owner}, but no such table in the schema`);
    else if (!writers.get(table)?.has(owner)) problems.push(`${table}: declared owner ${owner} writes it nowhere`);
  }
  for (const [table, byFolder] of [...writers].sort(([a], [b]) => a.localeCompare(b))) {
    for (const [folder, places] of byFolder) {
      if (owners[table] !== folder) problems.push(`${table}: written by ${folder} (${places.join(", ")}), owner is ${owners[table] ?? "undeclared"}`);
    }
  }
  return problems;
}

if (import.meta.main) {
  const writers = findTableWriters(join(import.meta.dir, ".."));
  for (const [table, byFolder] of [...writers].sort(([a], [b]) => a.localeCompare(b))) {
    for (const [folder, places] of byFolder) console.log(`${table}: ${folder} (${places.join(", ")})`);
  }
}
