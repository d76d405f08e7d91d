/** New-password policy after NIST SP 800-63B 5.1.1.2 (docs/dashboard.md#password-policy). */
import type { ZxcvbnFactory } from "@zxcvbn-ts/core";

/** At least 10 characters (Unicode code points); NIST's floor is 8, ours is stricter. */
const PASSWORD_MIN_CHARS = 10;
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
// Loaded on first use: importing and ranking the dictionary takes a few hundred ms.
const zxcvbn = () =>
  (matcher ??= Promise.all([import("@zxcvbn-ts/core"), import("@zxcvbn-ts/language-common")]).then(
    ([core, common]) =>
      new core.ZxcvbnFactory({ dictionary: { "passwords-common": common.dictionary["passwords-common"] } }),
  ));

/** True when the whole password is a common one (any case, l33t, reversed) or a short unit repeated. */
export async function isCommonPassword(password: string): Promise<boolean> {
  const seq = (await zxcvbn()).check(password).sequence;
  const [m] = seq;
  if (seq.length !== 1 || !m || m.token !== password) return false;
  if (m.pattern === "dictionary") return true;
  if (m.pattern === "repeat" && typeof m.baseToken === "string")
    return [...m.baseToken].length <= 3 || (await isCommonPassword(m.baseToken));
  return false;
}

/** An affix this short is taken off whatever it is. */
const AFFIX_MAX_CHARS = 6;
/** A longer affix is taken off when zxcvbn guesses it in fewer tries than this. */
const AFFIX_MAX_GUESSES = 1e6;
const CORE_MIN_CHARS = 4;
const CORE_MAX_CHARS = 40;

const LEADING = /^[^\p{L}]+/u;
const TRAILING = /[^\p{L}]+$/u;
const LEADING_SYMBOLS = /^[^\p{L}\p{N}]+/u;
const TRAILING_SYMBOLS = /[^\p{L}\p{N}]+$/u;
const codePoints = (s: string) => [...s].length;

function affixes(password: string, whole: RegExp, symbols: RegExp): string[] {
  const out = new Set([""]);
  for (const re of [whole, symbols]) {
    const m = re.exec(password)?.[0];
    if (m && m.length < password.length) out.add(m);
  }
  return [...out];
}

/** True when taking predictable affixes off leaves a common password (`Password123!`, `!!dragon2024`). */
async function isCommonWithAffixes(password: string): Promise<boolean> {
  const z = await zxcvbn();
  const strippable = (affix: string) =>
    affix === "" || codePoints(affix) <= AFFIX_MAX_CHARS || z.check(affix).guesses < AFFIX_MAX_GUESSES;
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

function emailParts(email: string): string[] {
  const e = email.trim().toLowerCase();
  const local = e.slice(0, Math.max(0, e.lastIndexOf("@")));
  return [e, local, local.split("+")[0] ?? local].filter((p) => [...p].length >= 3);
}

/**
 * Checks a new password for the account `email` (the common list loads on first use).
 * @returns the first problem in the order of {@link PasswordProblem}, or undefined when acceptable
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
