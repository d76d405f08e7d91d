/**
 * The spreadsheet formula guard of the CSV export and its undoing on import (OWASP, "CSV Injection"): a cell that
 * a spreadsheet would run as a formula gets a leading `'`, and the import takes exactly that `'` off again.
 */

/** What a spreadsheet skips before it looks for a formula: whitespace (NBSP, U+3000 too), controls, the BOM and other format characters (zero-width). */
const SKIPPED_LEAD = /^[\p{White_Space}\p{Cc}\p{Cf}]+/u;
/** OWASP's set: `=`, `+`, `-`, `@`; checked after NFKC, which folds the full-width `＝ ＋ － ＠` and the small forms `﹦ ﹢ ﹣ ﹫` to them. */
const FORMULA_CHAR = /^[=+\-@]/;

/** True when a spreadsheet could read `v` as a formula: it starts with a tab, CR or LF (OWASP lists tab and CR), or its first character after {@link SKIPPED_LEAD} is a formula start. */
function startsFormula(v: string): boolean {
  if (/^[\t\r\n]/.test(v)) return true;
  const first = v.replace(SKIPPED_LEAD, "").codePointAt(0);
  return first !== undefined && FORMULA_CHAR.test(String.fromCodePoint(first).normalize("NFKC"));
}

/** True when `v` gets the guard: a formula start once its own leading `'`s are set aside, so `'=x` is guarded too and comes back intact. */
const needsGuard = (v: string) => startsFormula(v.replace(/^'+/, ""));

/** `v` as an export writes it: `'` + `v` when a spreadsheet could run it, else `v` unchanged. */
export const guardCell = (v: string): string => (needsGuard(v) ? `'${v}` : v);

/** The inverse of {@link guardCell} on import: the one `'` it added is removed; any other cell is unchanged. */
export const unguardCell = (v: string): string => (v.startsWith("'") && needsGuard(v.slice(1)) ? v.slice(1) : v);
