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
  if (await isCommonPassword(password)) return "common";
  return undefined;
}
