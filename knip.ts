/**
 * knip (`bun run knip`, in .ci/run): no unused file, export, type or dependency. Two runs: the whole repository,
 * then `--production` (tests left out), where an export only tests use passes only if its own file uses it too,
 * i.e. the test drives code production runs. The rules: docs/architecture.md, "Dead code".
 */
import type { KnipConfig } from "knip";

const production = process.argv.includes("--production") || process.argv.includes("-p");

export default {
  // `!` marks production code. package.json's scripts add src/main.ts and drizzle.config.ts.
  entry: [
    "src/cli/*.ts!",
    "scripts/**/*.ts!",
    "bench/*.ts!",
    "clients/typescript/{index,build,generate}.ts!",
    "test/**/*.{ts,mjs}",
    "src/**/*.test.ts",
  ],
  project: [
    "src/**/*.ts!",
    "test/**/*.{ts,mjs}",
    "bench/**/*.ts!",
    "scripts/**/*.ts!",
    "clients/typescript/*.ts!",
  ],
  ignoreExportsUsedInFile: production,
  // Reached by path, not by import: Bun.resolveSync (swagger-ui-dist), a bin file spawned by a test or the release
  // script, a module named at run time (kubernetes-models by apiVersion, openapi-typescript through createRequire).
  ignoreDependencies: [
    "swagger-ui-dist",
    "@cyclonedx/cyclonedx-npm",
    "@redocly/cli",
    "@stoplight/spectral-cli",
    "kubernetes-models",
    "@kubernetes-models/prometheus-operator",
    "openapi-typescript",
  ],
  // Debian's programs (.ci/run, the image), not npm packages.
  ignoreBinaries: ["pg_dump", "pg_restore", "psql", "promtool", "kubectl", "runuser"],
} satisfies KnipConfig;
