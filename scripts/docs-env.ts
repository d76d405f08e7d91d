/** `bun run docs:env`: regenerates the environment table of docs/deployment.md from the configuration schema. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withEnvTable } from "./env-docs.ts";

const file = join(import.meta.dir, "..", "docs", "deployment.md");
writeFileSync(file, withEnvTable(readFileSync(file, "utf8")));
console.log(`updated ${file}`);
