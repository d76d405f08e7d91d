/**
 * File-level import cycles of a folder, found by madge (`madge --circular --extensions ts`), type-only imports
 * included. `bun run check:cycles` prints them and exits 1 when there is any; test/architecture/imports.test.ts
 * asserts there are none.
 *
 * madge parses TypeScript through @typescript-eslint/typescript-estree, which needs the TypeScript 5 compiler API;
 * the project's `typescript` is the native TypeScript 7 compiler, which has none. The parser is therefore pointed
 * at the `typescript5` alias (a devDependency) for the duration of the call — only the `typescript` requests made
 * while madge runs are redirected.
 */
import Module, { createRequire } from "node:module";
import { resolve } from "node:path";
import { isTestFile } from "./sizes.ts";

const require = createRequire(import.meta.url);

type Resolver = (request: string, parent: unknown, ...rest: unknown[]) => string;
type Madge = (
  path: string,
  config: Record<string, unknown>,
) => Promise<{ circular(): string[][]; obj(): Record<string, string[]> }>;

/**
 * The cycles madge finds under `dir` (each a list of paths relative to `dir`), and how many files it read (a
 * parser that silently failed would read none and report no cycle, so callers check `files` too).
 */
export async function fileCycles(dir: string, root = process.cwd()): Promise<{ cycles: string[][]; files: number }> {
  const mod = Module as unknown as { _resolveFilename: Resolver };
  const original = mod._resolveFilename;
  const ts5 = require.resolve("typescript5");
  mod._resolveFilename = function (this: unknown, request, parent, ...rest) {
    return request === "typescript" ? ts5 : original.call(this, request, parent, ...rest);
  };
  try {
    const madge = require("madge") as Madge;
    // Test files beside the code are left out, as in scripts/import-graph.ts: madge still reads them as entry points,
    // so their imports are not followed (dependencyFilter) and they are then dropped from the result (excludeRegExp).
    const res = await madge(resolve(root, dir), {
      fileExtensions: ["ts", "tsx"],
      tsConfig: resolve(root, "tsconfig.json"),
      dependencyFilter: (_dependency: string, importer: string) => !isTestFile(importer),
      excludeRegExp: [/\.test\.ts$/],
    });
    return { cycles: res.circular(), files: Object.keys(res.obj()).length };
  } finally {
    mod._resolveFilename = original;
  }
}

if (import.meta.main) {
  const dir = process.argv[2] ?? "src";
  const { cycles, files } = await fileCycles(dir);
  console.log(`${files} files read under ${dir}; ${cycles.length} file-level import cycle(s)`);
  for (const c of cycles) console.log(`  ${c.join(" -> ")} -> ${c[0]}`);
  if (cycles.length > 0 || files === 0) process.exit(1);
}
