/**
 * Builds the npm package `@courier-tracking/client` into `dist/`: ESM JavaScript and `.d.ts` from `index.ts`,
 * plus the generated `schema.d.ts` (a declaration file, which tsc does not copy).
 *
 *   bun run client:build            (then `npm pack` in clients/typescript)
 *
 * TypeScript 5 (devDependency `typescript5`) emits: its JavaScript and declaration emit is the long-settled one;
 * TypeScript 7 stays the project's type checker.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const HERE = import.meta.dir;
export const DIST = join(HERE, "dist");

/** Emits `dist/`. @throws when tsc reports an error (its output is in the message). */
export function build(): void {
  rmSync(DIST, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve("typescript5/bin/tsc");
  const r = spawnSync(process.execPath, [tsc, "-p", join(HERE, "tsconfig.build.json")], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`tsc failed (${r.status}):\n${r.stdout}${r.stderr}`);
  copyFileSync(join(HERE, "schema.d.ts"), join(DIST, "schema.d.ts"));
}

if (import.meta.main) {
  build();
  console.log(`built ${DIST}`);
}
