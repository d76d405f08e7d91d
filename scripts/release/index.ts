/**
 * Cuts a release (docs/releases.md): checks CHANGELOG.md has the version's section, bumps the version (service and
 * client package.json, the Kubernetes release and image tag), writes the release's upgrade fixture, builds and packs
 * the client, writes a CycloneDX SBOM of the image's dependencies, commits and tags `v<version>`. Pushes nothing.
 *
 *   bun run release 1.1.0 [--dry-run] [--out dist/release/1.1.0] [--pg postgres://…]
 *
 * `--dry-run` runs every step but the commit and the tag, writes the fixture into the output folder, and puts the
 * version back afterwards.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { FIXTURES_DIR, ROOT, writeFixture } from "./fixture.ts";

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;
const CLIENT_DIR = join(ROOT, "clients", "typescript");

/** A refusal to release, with the reason an operator can act on. */
export class ReleaseError extends Error {}

/** Negative, 0 or positive as `a` is older than, equal to or newer than `b` (MAJOR.MINOR.PATCH only). */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [a, b].map((v) => v.split(".").map(Number));
  for (let i = 0; i < 3; i++) if (x![i] !== y![i]) return x![i]! - y![i]!;
  return 0;
}

/**
 * The body of `## [version] - YYYY-MM-DD` in a Keep a Changelog text (up to the next `## `).
 * @throws ReleaseError when the heading is missing, undated, or its section lists no change
 */
export function changelogSection(changelog: string, version: string): string {
  const lines = changelog.split("\n");
  const escaped = version.replaceAll(".", "\\.");
  const start = lines.findIndex((l) => new RegExp(`^## \\[${escaped}\\]`).test(l));
  if (start < 0)
    throw new ReleaseError(
      `CHANGELOG.md has no "## [${version}] - YYYY-MM-DD" section: move the lines of [Unreleased] under it first`,
    );
  if (!new RegExp(`^## \\[${escaped}\\] - \\d{4}-\\d{2}-\\d{2}$`).test(lines[start]!))
    throw new ReleaseError(`CHANGELOG.md: write the release date as "## [${version}] - YYYY-MM-DD"`);
  const end = lines.findIndex((l, i) => i > start && l.startsWith("## "));
  const body = lines
    .slice(start + 1, end < 0 ? undefined : end)
    .join("\n")
    .trim();
  if (!/^- /m.test(body)) throw new ReleaseError(`CHANGELOG.md: the ${version} section lists no change`);
  return body;
}

function run(cmd: string, args: string[], cwd = ROOT, env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync(cmd, args, { cwd, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}):\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

const K8S_DIR = join(ROOT, "deploy", "kubernetes");
/** The files that name the version, each with how to set it (package.json's rewritten; the YAML edited in place). */
const VERSION_FILES: [string, (text: string, version: string) => string][] = [
  [join(ROOT, "package.json"), (t, v) => `${JSON.stringify({ ...JSON.parse(t), version: v }, null, 2)}\n`],
  [join(CLIENT_DIR, "package.json"), (t, v) => `${JSON.stringify({ ...JSON.parse(t), version: v }, null, 2)}\n`],
  // The Kubernetes release (the migration Job's name) and the placeholder image's tag (docs/deployment.md).
  [join(K8S_DIR, "settings.yaml"), (t, v) => t.replace(/^( {2}release: ).+$/m, `$1${v}`)],
  [join(K8S_DIR, "kustomization.yaml"), (t, v) => t.replace(/^( {4}newTag: ).+$/m, `$1${v}`)],
];

function setVersion(version: string): void {
  for (const [file, set] of VERSION_FILES) writeFileSync(file, set(readFileSync(file, "utf8"), version));
}

/** What a release run wrote, for the caller (and the test) to check. */
export interface ReleaseResult {
  version: string;
  tag: string | undefined;
  fixtureDir: string;
  clientTarball: string;
  sbom: string;
}

/**
 * Runs the release of `version` in the checkout at ROOT.
 * @throws ReleaseError for a refusal (bad version, changelog, dirty tree, existing tag); Error when a step fails
 */
export async function release(opts: {
  version: string;
  dryRun?: boolean;
  outDir?: string;
  adminUrl: string;
}): Promise<ReleaseResult> {
  const { version } = opts;
  if (!SEMVER.test(version)) throw new ReleaseError(`"${version}" is not a version MAJOR.MINOR.PATCH`);
  const current = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;
  if (compareVersions(version, current) <= 0)
    throw new ReleaseError(`${version} is not newer than the current version ${current}`);
  const notes = changelogSection(readFileSync(join(ROOT, "CHANGELOG.md"), "utf8"), version);
  if (run("git", ["status", "--porcelain"]).trim())
    throw new ReleaseError("the working tree has changes: commit or stash them first");
  const tag = `v${version}`;
  if (run("git", ["tag", "--list", tag]).trim()) throw new ReleaseError(`the tag ${tag} exists already`);

  const outDir = opts.outDir ?? join(ROOT, "dist", "release", version);
  mkdirSync(outDir, { recursive: true });
  setVersion(version);
  // A dry run leaves test/upgrade/ alone: a fixture there would become the "previous release" of the upgrade tests.
  const fixtureDir = opts.dryRun ? join(outDir, "upgrade-fixture") : join(FIXTURES_DIR, version);
  try {
    await writeFixture({ version, outDir: fixtureDir, adminUrl: opts.adminUrl });
    run("bun", ["run", join(CLIENT_DIR, "build.ts")]);
    const packed = JSON.parse(
      run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", outDir], CLIENT_DIR),
    );
    const clientTarball = join(outDir, packed[0].filename as string);
    // The image installs `--production`: the SBOM lists what it ships, not the development tools.
    const sbom = join(outDir, `courier-tracking-api-${version}.cdx.json`);
    const cli = join(ROOT, "node_modules", "@cyclonedx", "cyclonedx-npm", "bin", "cyclonedx-npm-cli.js");
    // `bun run` sets npm_execpath to bun; cyclonedx-npm runs `npm ls` through it and needs npm's own.
    const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("npm_")));
    run(
      "node",
      [
        cli,
        "--omit",
        "dev",
        "--output-format",
        "JSON",
        "--output-file",
        sbom,
        "--spec-version",
        "1.6",
        "--mc-type",
        "application",
      ],
      ROOT,
      npmEnv,
    );
    rmSync(join(CLIENT_DIR, "dist"), { recursive: true, force: true });
    if (opts.dryRun) return { version, tag: undefined, fixtureDir, clientTarball, sbom };
    run("git", ["add", ...VERSION_FILES.map(([f]) => relative(ROOT, f)), relative(ROOT, fixtureDir)]);
    run("git", ["commit", "-q", "-m", `Release ${version}`]);
    run("git", ["tag", "-a", tag, "-m", `${tag}\n\n${notes}`]);
    return { version, tag, fixtureDir, clientTarball, sbom };
  } finally {
    if (opts.dryRun) setVersion(current);
  }
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      "dry-run": { type: "boolean", default: false },
      out: { type: "string" },
      pg: { type: "string", default: process.env.TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres" },
    },
  });
  const version = positionals[0];
  if (!version || positionals.length > 1) {
    console.error("Usage: bun run release <version> [--dry-run] [--out dir] [--pg postgres://…]");
    process.exit(2);
  }
  try {
    const r = await release({ version, dryRun: values["dry-run"], outDir: values.out, adminUrl: values.pg! });
    console.log(JSON.stringify({ ...r, fixtureDir: relative(ROOT, r.fixtureDir) }, null, 2));
    if (r.tag) console.log(`tagged ${r.tag}; push with: git push origin HEAD ${r.tag}`);
    else console.log(`dry run: nothing committed or tagged; ${relative(ROOT, r.fixtureDir)} left to inspect`);
  } catch (e) {
    if (!(e instanceof ReleaseError)) throw e;
    console.error(`release refused: ${e.message}`);
    process.exit(1);
  }
}
