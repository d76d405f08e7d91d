/**
 * Size limits of src/: no file over {@link MAX_FILE_LINES} lines and no
 * function over {@link MAX_FUNCTION_LINES} (docs/architecture.md, "Size").
 * Functions are found with Babel's parser (TypeScript 7's compiler has no JS
 * API): declarations, methods,
 * arrow functions and function expressions, each measured from its first to
 * its last line (a nested function counts in its parent as well).
 *
 * Usage: `bun scripts/sizes.ts` prints every breach and exits 1 if any.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parse } from "@babel/parser";

/** Longest file allowed, lines. */
export const MAX_FILE_LINES = 300;
/** Longest function allowed, lines. */
export const MAX_FUNCTION_LINES = 80;

/** One breach: a file or a function over its limit. */
export interface Breach {
  file: string;
  /** `file`, or the function's name (`<anonymous>` if it has none) with its first line. */
  what: string;
  lines: number;
  limit: number;
}

/**
 * Whether `name` is a test file (`*.test.ts`). A courier folder keeps its test beside its adapter; the checks of
 * src/ (sizes, import graph, table writers) read the service's code, as they did when every test lived under test/.
 */
export const isTestFile = (name: string): boolean => name.endsWith(".test.ts");

/** Every `.ts` file under `dir` (recursively), declaration and test files left out. */
export function* tsFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* tsFiles(path);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") && !isTestFile(entry.name)) yield path;
  }
}

type Node = { type: string; loc?: { start: { line: number }; end: { line: number } }; [key: string]: unknown };

const FUNCTION_TYPES = new Set([
  "FunctionDeclaration",
  "FunctionExpression",
  "ArrowFunctionExpression",
  "ObjectMethod",
  "ClassMethod",
  "ClassPrivateMethod",
]);

function keyName(key: unknown): string | undefined {
  const k = key as Node | undefined;
  if (!k) return undefined;
  if (k.type === "Identifier" || k.type === "PrivateName")
    return String((k as { name?: unknown }).name ?? ((k as { id?: Node }).id as { name?: string } | undefined)?.name);
  if (k.type === "StringLiteral") return String(k.value);
  return undefined;
}

function nameOf(node: Node, parent: Node | undefined): string {
  const own = keyName(node.id) ?? keyName(node.key);
  if (own) return own;
  if (parent?.type === "VariableDeclarator") return keyName(parent.id) ?? "<anonymous>";
  if (parent?.type === "ObjectProperty" || parent?.type === "ClassProperty")
    return keyName(parent.key) ?? "<anonymous>";
  if (parent?.type === "CallExpression") return "callback";
  return "<anonymous>";
}

function walk(node: Node, parent: Node | undefined, onFunction: (fn: Node, parent: Node | undefined) => void): void {
  if (FUNCTION_TYPES.has(node.type)) onFunction(node, parent);
  for (const [key, value] of Object.entries(node)) {
    if (key === "loc" || key === "leadingComments" || key === "trailingComments" || key === "innerComments") continue;
    if (Array.isArray(value)) {
      for (const child of value)
        if (child && typeof child === "object" && typeof (child as Node).type === "string")
          walk(child as Node, node, onFunction);
    } else if (value && typeof value === "object" && typeof (value as Node).type === "string")
      walk(value as Node, node, onFunction);
  }
}

/** Every breach in the `.ts` files under `root` (paths in the result are relative to `base`). */
export function findBreaches(root: string, base = root): Breach[] {
  const breaches: Breach[] = [];
  for (const path of tsFiles(root)) {
    const text = readFileSync(path, "utf8");
    const file = relative(base, path);
    const fileLines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    if (fileLines > MAX_FILE_LINES) breaches.push({ file, what: "file", lines: fileLines, limit: MAX_FILE_LINES });
    const ast = parse(text, { sourceType: "module", plugins: ["typescript"] }) as unknown as { program: Node };
    walk(ast.program, undefined, (fn, parent) => {
      const lines = fn.loc!.end.line - fn.loc!.start.line + 1;
      if (lines > MAX_FUNCTION_LINES)
        breaches.push({
          file,
          what: `${nameOf(fn, parent)} (line ${fn.loc!.start.line})`,
          lines,
          limit: MAX_FUNCTION_LINES,
        });
    });
  }
  return breaches;
}

if (import.meta.main) {
  const root = join(import.meta.dir, "..");
  const breaches = findBreaches(join(root, "src"), root);
  for (const b of breaches) console.log(`${b.file}: ${b.what} has ${b.lines} lines (limit ${b.limit})`);
  console.log(`${breaches.length} breach(es)`);
  process.exit(breaches.length ? 1 : 0);
}
