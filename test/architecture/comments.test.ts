/**
 * Comment budget of src/ (docs/architecture.md, "Comments"): scripts/comment-share.ts counts comment lines against
 * non-blank lines and fails over the share or on a header comment over 8 lines.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { countText, main, MAX_HEADER_LINES } from "../../scripts/comment-share.ts";

/** Runs the check on a folder holding `files`; returns its exit code and printed lines. */
function run(files: Record<string, string>, args: string[] = []): { code: number; out: string[] } {
  const base = mkdtempSync(join(tmpdir(), "ct-comments-"));
  try {
    mkdirSync(join(base, "src"));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(base, "src", name), text);
    const out: string[] = [];
    return { code: main(["src", ...args], base, (line) => out.push(line)), out };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

const code = (n: number) => Array.from({ length: n }, (_, i) => `export const v${i} = ${i};`).join("\n");

describe("comment budget", () => {
  test("a file within budget passes; one over the share fails", () => {
    expect(run({ "ok.ts": `// one line of why\n${code(9)}\n` }).code).toBe(0);
    const over = run({ "chatty.ts": `${code(5)}\n// a\n// b\n` });
    expect(over.code).toBe(1);
    expect(over.out[0]).toContain("2 of 7 non-blank lines");
    expect(run({ "chatty.ts": `${code(5)}\n// a\n// b\n` }, ["--max", "30"]).code).toBe(0);
  });

  test("a header comment over 8 lines fails even when the share is low", () => {
    const header = (n: number) => `/**\n${" * why\n".repeat(n - 2)} */\n`;
    expect(run({ "ok.ts": header(MAX_HEADER_LINES) + code(80) }).code).toBe(0);
    const long = run({ "long.ts": header(MAX_HEADER_LINES + 1) + code(80) });
    expect(long.code).toBe(1);
    expect(long.out).toContain(`header over ${MAX_HEADER_LINES} lines: src/long.ts (${MAX_HEADER_LINES + 1})`);
  });

  test("comment markers in strings, templates and regexes are code; a trailing comment leaves its line code", () => {
    const text =
      'const a = "// no";\nconst b = `/* no */`;\nconst c = /\\/\\/ no/;\nconst d = 1; // trailing\n/* one\n   two */\n';
    expect(countText(text)).toEqual({ comments: 2, code: 6, header: 0 });
    expect(countText("#!/usr/bin/env bun\n// head\n// more\n\nimport x from 'y';\n// not header\n").header).toBe(2);
  });
});
