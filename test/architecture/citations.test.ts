/**
 * The repository stands on its own: no file in src/, test/, bench/, scripts/, docs/ or the README cites a document
 * the reader does not have — an internal issue number, "CONTRACT n", the house style guide by name, or a path into a
 * sibling `shared/` folder. Comments cite the spec's section or docs/spec-map.md instead.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");
const SELF = relative(ROOT, import.meta.path);

/** What an outside citation looks like. */
export const OUTSIDE_CITATION =
  /CONTRACT(\.md| ?§| sections?| \d)|\bissues? \d+|\bSTYLE( habit| \d|\)|\.md)|\.{2}\/shared\//i;

test("no file cites an issue, CONTRACT, STYLE or a sibling shared folder", () => {
  const files = [
    "README.md",
    ...["src", "test", "bench", "scripts", "docs"].flatMap((dir) => [
      ...new Bun.Glob(`${dir}/**/*.{ts,md,sh}`).scanSync({ cwd: ROOT }),
    ]),
  ];
  expect(files.length).toBeGreaterThan(100);
  const leaks = files
    .filter((f) => f !== SELF)
    .flatMap((f) =>
      readFileSync(join(ROOT, f), "utf8")
        .split("\n")
        .map((line, i) => `${f}:${i + 1}: ${line.trim()}`)
        .filter((entry) => OUTSIDE_CITATION.test(entry.slice(entry.indexOf(": ") + 2))),
    );
  expect(leaks).toEqual([]);
});

test("the pattern catches each kind of outside citation and passes the spec's own sections", () => {
  for (const line of [
    "(CONTRACT 6)",
    "see CONTRACT.md",
    "Issue 4 item 2",
    "issues 11",
    "(STYLE habit 7)",
    "shape (STYLE)",
    `${".."}/shared/spec/x.txt`,
  ])
    expect(OUTSIDE_CITATION.test(line), line).toBe(true);
  for (const line of ["(spec: Events)", "spec-map Decisions: Re-checks", "a style of its own", "tissue 4"])
    expect(OUTSIDE_CITATION.test(line), line).toBe(false);
});
