/**
 * The password policy for new passwords, after NIST SP 800-63B section
 * 5.1.1.2 (memorized secret verifiers): a length floor, no composition
 * rules, and a check against values known to be commonly used, repetitive
 * or context-specific. Not a strength score: a password is refused only for
 * one of the reasons below, and the form says which.
 *
 * The common-password list is zxcvbn-ts's `passwords-common` dictionary
 * (about 49,000 entries ranked by frequency in breach corpora); its matcher
 * also finds the list's entries capitalised, l33t-spelled (`P@ssw0rd123`) or
 * reversed. Only that dictionary is loaded: zxcvbn's word lists (names,
 * diceware words) would refuse good passphrases.
 *
 * People who are told their password is common add something predictable at
 * an end (`Password123!`, `iloveyou123`, `2024welcome`), so a password is
 * also common when, once a short or guessable run of digits and symbols is
 * taken off either end (and runs of one repeated character are shortened),
 * what remains is a list entry (docs/dashboard.md, Password policy).
 */
import type { ZxcvbnFactory } from "@zxcvbn-ts/core";

/** At least 10 characters (Unicode code points); NIST's floor is 8, ours is stricter. */
export const PASSWORD_MIN_CHARS = 10;
/** At most 128 code points: keeps hashing and checking work per request bounded (NIST: allow at least 64). */
export const PASSWORD_MAX_CHARS = 128;

export type PasswordProblem = "too_short" | "too_long" | "whitespace" | "repeated" | "contains_email" | "common";

/** What the sign-up form shows for each problem. */
export const PASSWORD_MESSAGES: Record<PasswordProblem, string> = {
  too_short: `Use ${PASSWORD_MIN_CHARS} to ${PASSWORD_MAX_CHARS} characters.`,
  too_long: `Use ${PASSWORD_MIN_CHARS} to ${PASSWORD_MAX_CHARS} characters.`,
  whitespace: "A password cannot be only spaces.",
  repeated: "A password cannot be one character repeated.",
  contains_email: "A password cannot contain your email address or its name part.",
  common: "This is a commonly used password. Choose one that is harder to guess, such as a few unrelated words.",
};

let matcher: Promise<ZxcvbnFactory> | undefined;
// Loaded and built on first use, not at start-up: importing the packages (the
// dictionary is decompressed on import) and ranking it take a few hundred ms.
const zxcvbn = () =>
  (matcher ??= Promise.all([import("@zxcvbn-ts/core"), import("@zxcvbn-ts/language-common")]).then(
    ([core, common]) => new core.ZxcvbnFactory({ dictionary: { "passwords-common": common.dictionary["passwords-common"] } }),
  ));

/**
 * True when the whole password is one commonly used password (any case,
 * l33t-spelled or reversed), or a short unit or a common password repeated
 * (`trustno1trustno1`, `abcabcabca`). Common words inside a longer
 * password do not count: `correct horse battery` is accepted.
 */
export async function isCommonPassword(password: string): Promise<boolean> {
  const seq = (await zxcvbn()).check(password).sequence;
  if (seq.length !== 1) return false;
  const m = seq[0]!;
  if (m.token !== password) return false;
  if (m.pattern === "dictionary") return true;
  if (m.pattern === "repeat" && typeof m.baseToken === "string") return [...m.baseToken].length <= 3 || (await isCommonPassword(m.baseToken));
  return false;
}

/** An affix this short is taken off whatever it is (6 digits: a million guesses, nothing to a cracking rig). */
const AFFIX_MAX_CHARS = 6;
/** A longer affix is taken off when zxcvbn guesses it in fewer tries than this (a sequence, a year, a repeat, a listed number). */
const AFFIX_MAX_GUESSES = 1e6;
/** A remainder shorter than this is not looked up: three letters between random digits are not a list entry. */
const CORE_MIN_CHARS = 4;
/** Nor one longer than this (the list's entries are short; bounds the work on a long password). */
const CORE_MAX_CHARS = 40;

const LEADING = /^[^\p{L}]+/u;
const TRAILING = /[^\p{L}]+$/u;
const LEADING_SYMBOLS = /^[^\p{L}\p{N}]+/u;
const TRAILING_SYMBOLS = /[^\p{L}\p{N}]+$/u;
const codePoints = (s: string) => [...s].length;

/** What can come off one end: nothing, the symbols only, or the whole run of digits and symbols. */
function affixes(password: string, whole: RegExp, symbols: RegExp): string[] {
  const out = new Set([""]);
  for (const re of [whole, symbols]) {
    const m = re.exec(password)?.[0];
    if (m && m.length < password.length) out.add(m);
  }
  return [...out];
}

/**
 * True when taking the affixes off (and shortening runs of 3 or more of one character) leaves a common
 * password (see {@link isCommonPassword}): `Password123!`, `iloveyou123`, `welcome12345`, `!!dragon2024`.
 */
export async function isCommonWithAffixes(password: string): Promise<boolean> {
  const z = await zxcvbn();
  const strippable = (affix: string) => affix === "" || codePoints(affix) <= AFFIX_MAX_CHARS || z.check(affix).guesses < AFFIX_MAX_GUESSES;
  const heads = affixes(password, LEADING, LEADING_SYMBOLS).filter(strippable);
  const tails = affixes(password, TRAILING, TRAILING_SYMBOLS).filter(strippable);
  const cores = new Set<string>();
  for (const head of heads)
    for (const tail of tails) {
      const core = password.slice(head.length, password.length - tail.length);
      const n = codePoints(core);
      if (n < CORE_MIN_CHARS || n > CORE_MAX_CHARS) continue;
      cores.add(core);
      cores.add(core.replace(/(.)\1{2,}/gu, "$1"));
    }
  cores.delete(password); // checked whole already
  for (const core of cores) if (codePoints(core) >= CORE_MIN_CHARS && (await isCommonPassword(core))) return true;
  return false;
}

/** The parts of an email a password must not contain: the local part and, for `name+tag`, the name (3+ characters each). */
function emailParts(email: string): string[] {
  const e = email.trim().toLowerCase();
  const local = e.slice(0, Math.max(0, e.lastIndexOf("@")));
  return [e, local, local.split("+")[0]!].filter((p) => [...p].length >= 3);
}

/**
 * Checks a new password for the account `email` (async: the common-password
 * list is loaded on first use).
 * @returns the first problem found (checked in the order of
 *   {@link PasswordProblem}), or undefined when the password is acceptable.
 */
export async function passwordProblem(password: string, email: string): Promise<PasswordProblem | undefined> {
  const chars = [...password];
  if (chars.length < PASSWORD_MIN_CHARS) return "too_short";
  if (chars.length > PASSWORD_MAX_CHARS) return "too_long";
  if (password.trim() === "") return "whitespace";
  if (chars.every((c) => c === chars[0])) return "repeated";
  const lower = password.toLowerCase();
  if (emailParts(email).some((p) => lower.includes(p))) return "contains_email";
  if ((await isCommonPassword(password)) || (await isCommonWithAffixes(password))) return "common";
  return undefined;
}
