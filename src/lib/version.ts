/** The service's own version (package.json, semver; docs/releases.md), not the API contract's (OpenAPI `info.version`). */
import { readFileSync } from "node:fs";

// Read, not imported: the import graph (test/architecture/imports.test.ts) stays a graph of source files.
export const SERVICE_VERSION: string = JSON.parse(
  readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
).version;
