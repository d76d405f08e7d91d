/**
 * `bun run release <version>` (scripts/release/index.ts, docs/releases.md) in a throw-away clone of this
 * repository (its node_modules linked in), never pushed: the refusals, then a real release that commits and tags,
 * with its upgrade fixture, client package and CycloneDX SBOM.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { changelogSection, compareVersions, ReleaseError } from "../../scripts/release/index.ts";
import { ADMIN_URL } from "../helpers/db.ts";

const ROOT = join(import.meta.dir, "..", "..");
const CURRENT = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;
const [major, minor] = CURRENT.split(".").map(Number);
const NEXT = `${major}.${minor! + 1}.0`;
let clone: string;

function sh(cmd: string, args: string[], cwd = clone) {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
    },
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}
const releaseRun = (...args: string[]) => sh("bun", ["run", "scripts/release/index.ts", ...args, "--pg", ADMIN_URL]);

beforeAll(() => {
  clone = mkdtempSync(join(tmpdir(), "ct-release-"));
  expect(sh("git", ["clone", "-q", "--no-hardlinks", ROOT, clone], tmpdir()).code).toBe(0);
  // A copy, not a symlink: `npm ls`, which the SBOM tool runs, takes a linked node_modules for extraneous
  // packages. Hard links where /tmp shares the checkout's file system, else a real copy.
  const modules = [join(ROOT, "node_modules"), join(clone, "node_modules")];
  if (sh("cp", ["-al", ...modules], tmpdir()).code !== 0) {
    rmSync(modules[1]!, { recursive: true, force: true });
    expect(sh("cp", ["-a", ...modules], tmpdir()).code).toBe(0);
  }
  expect(sh("git", ["status", "--porcelain"]).out).toBe("");
});
afterAll(() => {
  if (clone) rmSync(clone, { recursive: true, force: true });
});

describe("the changelog and version checks", () => {
  const log =
    "# Changelog\n\n## [Unreleased]\n\n## [1.1.0] - 2026-12-01\n\n### Added\n\n- a thing\n\n## [1.0.0] - 2026-11-28\n\n- first\n";
  test("the version's section is found up to the next version", () => {
    expect(changelogSection(log, "1.1.0")).toBe("### Added\n\n- a thing");
  });
  test("a missing, undated or empty section is refused", () => {
    expect(() => changelogSection(log, "1.2.0")).toThrow(ReleaseError);
    expect(() => changelogSection("## [1.2.0]\n\n- x\n", "1.2.0")).toThrow(/YYYY-MM-DD/);
    expect(() => changelogSection("## [1.2.0] - 2026-12-01\n\n### Added\n\n## [1.1.0]", "1.2.0")).toThrow(/no change/);
  });
  test("versions compare numerically", () => {
    expect(compareVersions("1.10.0", "1.9.9")).toBeGreaterThan(0);
    expect(compareVersions("1.0.0", "1.0.0")).toBe(0);
    expect(compareVersions("0.9.0", "1.0.0")).toBeLessThan(0);
  });
});

test("refusals: not a version, not newer, no changelog section, a dirty tree", () => {
  expect(releaseRun("1.1").out).toContain("is not a version");
  expect(releaseRun(CURRENT).out).toContain("is not newer");
  const refused = releaseRun(NEXT);
  expect(refused.code).toBe(1);
  expect(refused.out).toContain(`no "## [${NEXT}] - YYYY-MM-DD" section`);
  writeFileSync(
    join(clone, "CHANGELOG.md"),
    readFileSync(join(clone, "CHANGELOG.md"), "utf8").replace(
      "## [Unreleased]",
      `## [Unreleased]\n\n## [${NEXT}] - 2026-12-01\n\n### Added\n\n- The release test's entry.\n`,
    ),
  );
  expect(releaseRun(NEXT).out).toContain("the working tree has changes");
  expect(sh("git", ["commit", "-qam", "Changelog for the release"]).code).toBe(0);
}, 60_000);

test("a release bumps the versions, writes the fixture, the client package and the SBOM, commits and tags", () => {
  const r = releaseRun(NEXT);
  expect(r.code, r.out).toBe(0);
  expect(JSON.parse(readFileSync(join(clone, "package.json"), "utf8")).version).toBe(NEXT);
  expect(JSON.parse(readFileSync(join(clone, "clients", "typescript", "package.json"), "utf8")).version).toBe(NEXT);
  const k8s = join(clone, "deploy", "kubernetes");
  expect((Bun.YAML.parse(readFileSync(join(k8s, "settings.yaml"), "utf8")) as any).data.release).toBe(NEXT);
  expect((Bun.YAML.parse(readFileSync(join(k8s, "kustomization.yaml"), "utf8")) as any).images[0].newTag).toBe(NEXT);

  const fixture = join(clone, "test", "upgrade", NEXT);
  const manifest = JSON.parse(readFileSync(join(fixture, "manifest.json"), "utf8"));
  expect(manifest.version).toBe(NEXT);
  expect(manifest.pending_deliveries.length).toBeGreaterThan(0);
  expect(existsSync(join(fixture, "dump.sql.gz"))).toBe(true);

  const out = join(clone, "dist", "release", NEXT);
  const tarball = join(out, `courier-tracking-client-${NEXT}.tgz`);
  const listed = sh("tar", ["-tzf", tarball]).out;
  expect(listed).toContain("package/dist/index.js");
  expect(listed).toContain("package/LICENSE");

  const sbom = JSON.parse(readFileSync(join(out, `courier-tracking-api-${NEXT}.cdx.json`), "utf8"));
  expect([sbom.bomFormat, sbom.specVersion]).toEqual(["CycloneDX", "1.6"]);
  expect([sbom.metadata.component.name, sbom.metadata.component.version]).toEqual(["courier-tracking-api", NEXT]);
  const components = new Set((sbom.components as { name: string }[]).map((c) => c.name));
  for (const dep of ["elysia", "postgres", "drizzle-orm", "pino"]) expect(components).toContain(dep);
  // The image's dependencies only: no development tool.
  for (const dev of ["@biomejs/biome", "drizzle-kit", "@cyclonedx/cyclonedx-npm"])
    expect(components).not.toContain(dev);

  // One commit with the bump and the fixture, tagged with the changelog's section.
  expect(sh("git", ["status", "--porcelain"]).out).toBe("");
  expect(sh("git", ["show", "-s", "--format=%s", `v${NEXT}`]).out).toContain(`Release ${NEXT}`);
  expect(sh("git", ["tag", "-l", "--format=%(contents)", `v${NEXT}`]).out).toContain("- The release test's entry.");
  expect(sh("git", ["show", "--stat", "--format=", `v${NEXT}`]).out).toContain(`test/upgrade/${NEXT}/manifest.json`);
  expect(releaseRun(NEXT).out).toContain("is not newer");
}, 180_000);
