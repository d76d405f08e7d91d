/**
 * Which folder of `src/` writes which table (docs/spec-map.md, "Table owners"; docs/architecture.md). A folder is
 * what the import graph calls one (`src/<dir>`, `src/modules/<name>`; scripts/import-graph.ts `folderOf`).
 *
 * A write is found, with Babel's parser, as:
 * - a drizzle call `.insert(t)`, `.update(t)` or `.delete(t)` whose argument is a table object of `db/schema` (its
 *   export name mapped to the table name through the `pgTable("name", …)` declarations and renamed re-exports):
 *   imported by name (renamed or not), reached through a namespace import (`schema.shipments`,
 *   `schema["shipments"]`), or a local alias of either (`const t = schema.shipments`, `const { shipments: t } = schema`);
 * - raw SQL in a tagged template (`sql\`…\``, `tx\`…\``, `db.$client\`…\``) or a string or untagged template passed
 *   to `.unsafe(…)` or drizzle's `sql.raw(…)`:
 *   `insert into <table>`, `update <table>` (not `for update`, `for no key update`, `do update`) or
 *   `delete from <table>`, where `<table>` is a declared table;
 * - a queue table declared for the claim engine, `defineQueue("<table>", …)` (its statements are the caller's writes).
 * Comments and ordinary strings are not read. Not found: a table named through `sql.identifier(…)`, passed in as a
 * parameter or imported through a module other than `db/schema`, and foreign keys' `on delete cascade` (the
 * database's doing, not a writer's).
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

/**
 * Export name → table name, from every `export const x = pgTable("name", …)` under `<root>/src/db/schema`, and every
 * renamed re-export of one there (`export { x as y }`, with or without `from`).
 */
export function readSchemaTables(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const texts = [...tsFiles(join(root, "src", "db", "schema"))].map((file) => readFileSync(file, "utf8"));
  for (const text of texts) {
    for (const m of text.matchAll(/export\s+const\s+(\w+)\s*=\s*pgTable\(\s*["'`](\w+)["'`]/g)) out.set(m[1]!, m[2]!);
  }
  const renames = texts.flatMap((text) =>
    [...text.matchAll(/export\s*(?:type\s*)?\{([^}]*)\}/g)].flatMap((m) => [...m[1]!.matchAll(/(\w+)\s+as\s+(\w+)/g)]),
  );
  for (let grew = true; grew; ) {
    grew = false;
    for (const [, from, to] of renames) {
      if (out.has(from!) && !out.has(to!)) [grew] = [true, out.set(to!, out.get(from!)!)];
    }
  }
  return out;
}

/** SQL write statements; the look-behinds leave out row locks (`for update`, `for no key update`) and upserts (`do update`). */
const RAW_WRITE =
  /(?<!\bfor\s+)(?<!\bkey\s+)(?<!\bdo\s+)\b(insert\s+into|update|delete\s+from)\s+"?([a-z_][a-z0-9_]*)"?/gi;

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
      for (const c of value)
        if (c && typeof c === "object" && typeof (c as Node).type === "string") out.push(c as Node);
    } else if (value && typeof value === "object" && typeof (value as Node).type === "string") out.push(value as Node);
  }
  return out;
}

/** What a name in a file stands for: one schema table, or the schema module itself (a namespace import). */
type SchemaRef = { table: string } | { namespace: true };

const SCHEMA_PATH = /(^|\/)db\/schema(\/|$|\.)/;

/** Local name → schema table or namespace, for what a file imports from `…db/schema…` (renamed imports included). */
function schemaImports(program: Node, byExport: Map<string, string>): Map<string, SchemaRef> {
  const local = new Map<string, SchemaRef>();
  for (const stmt of program.body as Node[]) {
    if (stmt.type !== "ImportDeclaration" || !SCHEMA_PATH.test(String((stmt.source as Node).value))) continue;
    for (const spec of stmt.specifiers as Node[]) {
      const name = String((spec.local as Node).name);
      if (spec.type === "ImportNamespaceSpecifier") local.set(name, { namespace: true });
      if (spec.type !== "ImportSpecifier") continue;
      const imported = (spec.imported as Node).name ?? (spec.imported as Node).value;
      const table = byExport.get(String(imported));
      if (table) local.set(name, { table });
    }
  }
  return local;
}

/** The expression inside type assertions and parentheses (`x as T`, `x!`, `(x)`, `x satisfies T`). */
function unwrap(node: Node): Node {
  const wrappers = [
    "TSAsExpression",
    "TSNonNullExpression",
    "TSSatisfiesExpression",
    "TSTypeAssertion",
    "ParenthesizedExpression",
  ];
  return wrappers.includes(node.type) ? unwrap(node.expression as Node) : node;
}

/** The schema table or namespace an expression names: an imported or aliased name, or `ns.table` / `ns["table"]`. */
function refOf(node: Node, refs: Map<string, SchemaRef>, byExport: Map<string, string>): SchemaRef | undefined {
  const n = unwrap(node);
  if (n.type === "Identifier") return refs.get(String(n.name));
  if (n.type !== "MemberExpression") return undefined;
  const object = refOf(n.object as Node, refs, byExport);
  if (!object || !("namespace" in object)) return undefined;
  const prop = n.property as Node;
  const key = n.computed ? (prop.type === "StringLiteral" ? prop.value : undefined) : prop.name;
  const table = byExport.get(String(key));
  return table ? { table } : undefined;
}

/**
 * Adds the file's aliases of schema names to `refs`: `const t = parcels`, `const t = schema.parcels`,
 * `const { parcels: t } = schema` (and chains of them). Names are matched without scopes, which can only over-report.
 */
function addAliases(program: Node, refs: Map<string, SchemaRef>, byExport: Map<string, string>): void {
  const declarators: Node[] = [];
  const collect = (node: Node) => {
    if (node.type === "VariableDeclarator" && node.init) declarators.push(node);
    for (const c of children(node)) collect(c);
  };
  collect(program);
  for (let grew = true; grew; ) {
    grew = false;
    const add = (name: string, ref: SchemaRef | undefined) => {
      if (ref && !refs.has(name)) [grew] = [true, refs.set(name, ref)];
    };
    for (const d of declarators) {
      const id = d.id as Node;
      const init = refOf(d.init as Node, refs, byExport);
      if (id.type === "Identifier") add(String(id.name), init);
      if (id.type !== "ObjectPattern" || !init || !("namespace" in init)) continue;
      for (const p of id.properties as Node[]) {
        if (p.type !== "ObjectProperty") continue;
        const key = p.key as Node;
        const value = unwrap(
          (p.value as Node).type === "AssignmentPattern" ? ((p.value as Node).left as Node) : (p.value as Node),
        );
        const table = byExport.get(String(key.type === "StringLiteral" ? key.value : key.name));
        if (table && value.type === "Identifier") add(String(value.name), { table });
      }
    }
  }
}

/** The text of a string literal or of an untagged template's fixed parts ("" for anything else). */
function literalText(node: Node): string {
  if (node.type === "StringLiteral") return String(node.value);
  if (node.type === "TemplateLiteral")
    return (node.quasis as Node[]).map((q) => String((q.value as { raw: string }).raw)).join(" ? ");
  return "";
}

/** The tables one file writes, with the line of each write. */
export function fileWrites(text: string, byExport: Map<string, string>): { table: string; line: number }[] {
  const program = (parse(text, { sourceType: "module", plugins: ["typescript"] }) as unknown as { program: Node })
    .program;
  const refs = schemaImports(program, byExport);
  addAliases(program, refs, byExport);
  const tables = new Set(byExport.values());
  const out: { table: string; line: number }[] = [];
  const visit = (node: Node) => {
    const line = node.loc?.start.line ?? 0;
    if (node.type === "CallExpression" && (node.callee as Node).type === "MemberExpression") {
      const method = ((node.callee as Node).property as Node).name;
      const arg = (node.arguments as Node[])[0];
      const ref =
        arg && (method === "insert" || method === "update" || method === "delete")
          ? refOf(arg, refs, byExport)
          : undefined;
      if (ref && "table" in ref) out.push({ table: ref.table, line });
      if ((method === "unsafe" || method === "raw") && arg)
        for (const t of rawSqlWrites(literalText(arg), tables)) out.push({ table: t, line });
    }
    // The claim engine's statements write the table its owner names: `defineQueue("recheck_queue", …)` (src/jobs/queue.ts).
    const callee = node.type === "CallExpression" ? (node.callee as Node) : undefined;
    const first = (node.arguments as Node[] | undefined)?.[0];
    if (
      callee?.type === "Identifier" &&
      callee.name === "defineQueue" &&
      first?.type === "StringLiteral" &&
      tables.has(String(first.value))
    )
      out.push({ table: String(first.value), line });
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
export function ownerProblems(
  writers: Writers,
  owners: Readonly<Record<string, string>>,
  schemaTables: ReadonlySet<string>,
): string[] {
  const problems: string[] = [];
  for (const table of [...schemaTables].sort())
    if (!(table in owners)) problems.push(`${table}: in the schema but has no declared owner`);
  for (const [table, owner] of Object.entries(owners)) {
    if (!schemaTables.has(table)) problems.push(`${table}: declared owner ${owner}, but no such table in the schema`);
    else if (!writers.get(table)?.has(owner)) problems.push(`${table}: declared owner ${owner} writes it nowhere`);
  }
  for (const [table, byFolder] of [...writers].sort(([a], [b]) => a.localeCompare(b))) {
    for (const [folder, places] of byFolder) {
      if (owners[table] !== folder)
        problems.push(
          `${table}: written by ${folder} (${places.join(", ")}), owner is ${owners[table] ?? "undeclared"}`,
        );
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
