/**
 * Comment budget of src/ (docs/architecture.md, "Comments"): comment lines are at most {@link DEFAULT_MAX_SHARE} % of
 * non-blank lines and no file's header comment is over {@link MAX_HEADER_LINES} lines. Comments are found with Babel's
 * parser, so `//` inside strings, templates and regexes does not count; a line counts as a comment line when nothing
 * but comment is on it. Test files beside the code are left out, as in scripts/sizes.ts.
 *
 * Usage: `bun scripts/comment-share.ts [dir] [--max <percent>]` (dir defaults to src/); exits 1 over budget.
 */
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parse } from "@babel/parser";
import { tsFiles } from "./sizes.ts";

/** Highest comment share allowed by default, percent of non-blank lines. */
export const DEFAULT_MAX_SHARE = 12;
/** Longest header comment allowed, lines. */
export const MAX_HEADER_LINES = 8;

/** One file's counts: `code` is every non-blank line, comment lines included. */
export interface FileCount {
  file: string;
  comments: number;
  code: number;
  header: number;
}

type Comment = { start: number; end: number };

/** Comment lines, non-blank lines and header comment lines of one TypeScript source text. */
export function countText(text: string): Omit<FileCount, "file"> {
  const ast = parse(text, { sourceType: "module", plugins: ["typescript"], errorRecovery: true }) as unknown as {
    comments: Comment[];
    program: { body: { start: number }[] };
  };
  let stripped = text;
  for (const c of ast.comments)
    stripped =
      stripped.slice(0, c.start) + stripped.slice(c.start, c.end).replace(/[^\n]/g, " ") + stripped.slice(c.end);
  const lines = text.split("\n");
  const strippedLines = stripped.split("\n");
  const isComment = lines.map((line, i) => line.trim() !== "" && strippedLines[i]!.trim() === "");
  const firstCode = ast.program.body[0]?.start ?? text.length;
  const headerEnd = text.slice(0, firstCode).split("\n").length - 1;
  const headerStart = isComment.indexOf(true);
  let header = 0;
  // The header is the first run of comment lines, when it opens the file (blank lines and a shebang aside).
  if (
    headerStart >= 0 &&
    headerStart <= headerEnd &&
    lines.slice(0, headerStart).every((l) => l.trim() === "" || l.startsWith("#!"))
  )
    for (let i = headerStart; i < lines.length && i <= headerEnd && (isComment[i] || lines[i]!.trim() === ""); i++)
      if (isComment[i]) header++;
  return { comments: isComment.filter(Boolean).length, code: lines.filter((l) => l.trim() !== "").length, header };
}

/** Counts for every `.ts` file under `root` (paths relative to `base`), test and declaration files left out. */
export function countFiles(root: string, base = root): FileCount[] {
  return [...tsFiles(root)].map((path) => ({ file: relative(base, path), ...countText(readFileSync(path, "utf8")) }));
}

/** Comment lines as a percentage of non-blank lines (0 for no lines). */
export const sharePercent = (counts: readonly FileCount[]): number => {
  const code = counts.reduce((n, c) => n + c.code, 0);
  return code ? (100 * counts.reduce((n, c) => n + c.comments, 0)) / code : 0;
};

/** Runs the check on `dir` and prints the report; the exit code is 1 when over budget. */
export function main(args: readonly string[], base = process.cwd(), print = console.log): number {
  const maxAt = args.indexOf("--max");
  const max = maxAt >= 0 ? Number(args[maxAt + 1]) : DEFAULT_MAX_SHARE;
  if (!Number.isFinite(max)) throw new Error("--max needs a number (percent)");
  const dir = args.find((a, i) => !a.startsWith("--") && (maxAt < 0 || i !== maxAt + 1)) ?? "src";
  const counts = countFiles(join(base, dir), base);
  const share = sharePercent(counts);
  print(
    `comment lines: ${counts.reduce((n, c) => n + c.comments, 0)} of ${counts.reduce((n, c) => n + c.code, 0)} non-blank lines in ${counts.length} files = ${share.toFixed(1)} % (max ${max} %)`,
  );
  print("top files by comment lines:");
  for (const c of [...counts].sort((a, b) => b.comments - a.comments).slice(0, 30))
    print(`  ${String(c.comments).padStart(4)} ${c.file}`);
  const headers = counts.filter((c) => c.header > MAX_HEADER_LINES);
  for (const c of headers) print(`header over ${MAX_HEADER_LINES} lines: ${c.file} (${c.header})`);
  return share > max || headers.length ? 1 : 0;
}

if (import.meta.main) process.exit(main(process.argv.slice(2), join(import.meta.dir, "..")));
