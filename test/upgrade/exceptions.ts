/**
 * Contract steps allowed on purpose (docs/releases.md, "Upgrades"): each names the release whose processes can no
 * longer run after it, the table (and column) it drops, renames or retypes, and why that is safe now. An entry is
 * added in the same commit as its migration, and only once no supported release uses what it removes.
 */
import type { CompatException } from "./support.ts";

export const COMPAT_EXCEPTIONS: readonly CompatException[] = [];

/** The exceptions that apply to an upgrade from `release`. */
export const exceptionsFor = (release: string) => COMPAT_EXCEPTIONS.filter((e) => e.release === release);
