/**
 * The import graph of `src/`, read from the code (type-only imports included: a type loop is still a loop for the
 * reader who has to understand both ends), and the folder-level view of it.
 *
 * A folder is `src/<dir>` or `src/modules/<name>`. A file directly under `src/` (app.ts, errors.ts, deps.ts,
 * main.ts, configure.ts) is a node of its own: these are composition roots and the small contracts the folders
 * beside them share, so "a module imports the error table" is not a loop with "app.ts imports the module".
 * File-level cycles among them are still caught (see findKnots).
 *
 * Test files (`*.test.ts`, e.g. a courier folder's own test) are not part of the graph: like the tests under test/,
 * they may import the simulator and test helpers.
 *
 * Run `bun scripts/import-graph.ts` to print folder loops and file cycles; `test/architecture/imports.test.ts`
 * keeps both at zero (bar an explicit allowlist).
 */
import { readdirSync, readFileSync, existsSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript5";
import { isTestFile } from "./sizes.ts";

/** file (repo-relative, forward slashes) → files it imports (same form). */
export type Graph = Map<string, Set<string>>;

const EXTENSIONS = [".ts", ".tsx"];

function listSources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listSources(path));
    else if (EXTENSIONS.some((ext) => name.endsWith(ext)) && !name.endsWith(".d.ts") && !isTestFile(name))
      out.push(path);
  }
  return out;
}

/** Resolves a relative specifier the way the bundler resolution does for our files; packages return null. */
function resolveSpecifier(fromFile: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null;
  const base = resolve(dirname(fromFile), spec);
  const candidates = [
    base,
    ...EXTENSIONS.map((ext) => base + ext),
    ...EXTENSIONS.map((ext) => join(base, "index" + ext)),
  ];
  for (const candidate of candidates) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

const toKey = (root: string, file: string) => relative(root, file).split(sep).join("/");

/**
 * Reads every `.ts`/`.tsx` file under `dir` (absolute or relative to `root`) and returns its import edges, keyed by
 * paths relative to `root`. Imports that leave `dir` (packages, other top folders) are dropped.
 */
export function readImportGraph(dir: string, root = process.cwd()): Graph {
  const absDir = resolve(root, dir);
  const graph: Graph = new Map();
  for (const file of listSources(absDir)) {
    const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = new Set<string>();
    for (const ref of info.importedFiles) {
      const target = resolveSpecifier(file, ref.fileName);
      if (target && target.startsWith(absDir + sep)) targets.add(toKey(root, target));
    }
    graph.set(toKey(root, file), targets);
  }
  return graph;
}

/** The folder a file belongs to (see the file comment); a file directly under `src/` stands alone. */
export function folderOf(file: string): string {
  const parts = file.split("/");
  const at = parts.indexOf("src");
  const rest = parts.slice(at + 1);
  if (rest.length === 1) return parts.slice(0, at + 2).join("/");
  if (rest[0] === "modules") return parts.slice(0, at + 3).join("/");
  return parts.slice(0, at + 2).join("/");
}

/** Folder edge `a → b` with the file imports that make it (for messages). */
export interface FolderGraph {
  edges: Map<string, Set<string>>;
  via: Map<string, string[]>;
}

/** Collapses a file graph into folders; an edge inside one folder is dropped. */
export function toFolderGraph(graph: Graph, folder = folderOf): FolderGraph {
  const edges = new Map<string, Set<string>>();
  const via = new Map<string, string[]>();
  for (const [from, targets] of graph) {
    const a = folder(from);
    if (!edges.has(a)) edges.set(a, new Set());
    for (const to of targets) {
      const b = folder(to);
      if (a === b) continue;
      edges.get(a)!.add(b);
      const key = `${a} -> ${b}`;
      via.set(key, [...(via.get(key) ?? []), `${from} -> ${to}`]);
    }
  }
  return { edges, via };
}

/**
 * Strongly connected components with more than one node (Tarjan), each sorted; a node importing itself counts too.
 * Every such component is a loop: each member reaches every other.
 */
export function findKnots(edges: Map<string, Set<string>>): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const knots: string[][] = [];
  const nodes = new Set<string>([...edges.keys(), ...[...edges.values()].flatMap((s) => [...s])]);

  const visit = (v: string) => {
    indexOf.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
      }
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || edges.get(v)?.has(v)) knots.push(component.sort());
    }
  };
  for (const v of [...nodes].sort()) if (!indexOf.has(v)) visit(v);
  return knots.sort((x, y) => x.join().localeCompare(y.join()));
}

/** Whether `to` is reachable from `from` (used to tell an allowlisted edge still closes a loop). */
export function reaches(edges: Map<string, Set<string>>, from: string, to: string): boolean {
  const seen = new Set<string>([from]);
  const queue = [from];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of edges.get(v) ?? []) {
      if (w === to) return true;
      if (!seen.has(w)) {
        seen.add(w);
        queue.push(w);
      }
    }
  }
  return false;
}

/** Folder edges that lie on a loop: `a → b` where `b` reaches `a` again. */
export function loopEdges(edges: Map<string, Set<string>>): string[] {
  const out: string[] = [];
  for (const [a, targets] of edges) {
    for (const b of targets) if (reaches(edges, b, a)) out.push(`${a} -> ${b}`);
  }
  return out.sort();
}

/** A folder edge that is known to close a loop and may stay until the work that removes it lands. */
export interface AllowedEdge {
  /** `src/<from> -> src/<to>`, as {@link toFolderGraph} names folders. */
  edge: string;
  /** Why it is there and what removes it (one line, for the reader of a failing test). */
  why: string;
}

/**
 * Problems with the folder graph, empty when there are none:
 * - a loop that remains once the allowlisted edges are taken out (a new loop, or an old one through a new edge);
 * - an allowlisted edge that no longer exists, or no longer lies on a loop (the list must only shrink).
 */
export function folderLoopProblems(folders: FolderGraph, allow: readonly AllowedEdge[]): string[] {
  const problems: string[] = [];
  for (const { edge } of allow) {
    const [a, b] = edge.split(" -> ") as [string, string];
    if (!folders.edges.get(a)?.has(b))
      problems.push(`allowlisted edge ${edge} no longer exists: remove it from the allowlist`);
    else if (!reaches(folders.edges, b, a))
      problems.push(`allowlisted edge ${edge} no longer closes a loop: remove it from the allowlist`);
  }
  const rest = new Map([...folders.edges].map(([k, v]) => [k, new Set(v)]));
  for (const { edge } of allow) {
    const [a, b] = edge.split(" -> ") as [string, string];
    rest.get(a)?.delete(b);
  }
  for (const knot of findKnots(rest)) {
    const inside = new Set(knot);
    const edges = loopEdges(
      new Map(knot.map((f) => [f, new Set([...(rest.get(f) ?? [])].filter((t) => inside.has(t)))])),
    );
    problems.push(
      `folder loop ${knot.join(" <-> ")}:\n${edges.map((e) => `  ${e}: ${folders.via.get(e)!.join(", ")}`).join("\n")}`,
    );
  }
  return problems;
}

/** Files a layering rule names: a string is a prefix of repo-relative paths, a RegExp is tested on the whole path. */
export type PathPattern = string | RegExp;

const matches = (path: string, p: PathPattern | undefined): boolean =>
  p !== undefined && (typeof p === "string" ? path.startsWith(p) : p.test(path));

/** A layering rule: files under `from` may not import files under `to`. */
export interface LayerRule {
  from: PathPattern;
  to: PathPattern;
  /** Targets under `to` that stay allowed (e.g. the folder itself, when `to` contains it). */
  allowTo?: PathPattern;
  /** Sources under `from` that are exempt (e.g. the one composition root). */
  allowFrom?: PathPattern;
  why: string;
}

/** Each import that breaks a rule, as `file -> target (why)`. */
export function layerViolations(graph: Graph, rules: readonly LayerRule[]): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    for (const rule of rules) {
      if (!matches(from, rule.from) || matches(from, rule.allowFrom)) continue;
      for (const to of targets)
        if (matches(to, rule.to) && !matches(to, rule.allowTo)) out.push(`${from} -> ${to} (${rule.why})`);
    }
  }
  return out.sort();
}

if (import.meta.main) {
  const graph = readImportGraph("src");
  const folders = toFolderGraph(graph);
  const edges = loopEdges(folders.edges);
  console.log(`folder loops (strongly connected groups): ${findKnots(folders.edges).length}`);
  for (const knot of findKnots(folders.edges)) console.log("  " + knot.join(" <-> "));
  console.log(`folder edges on a loop: ${edges.length}`);
  for (const edge of edges) console.log(`  ${edge}\n      ${folders.via.get(edge)!.join("\n      ")}`);
  const fileKnots = findKnots(graph);
  console.log(
    `file-level strongly connected groups: ${fileKnots.length} (${fileKnots.reduce((n, k) => n + k.length, 0)} files)`,
  );
  for (const knot of fileKnots) console.log("  " + knot.join(", "));
}
