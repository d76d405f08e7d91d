/** Password hashing: argon2id via `Bun.password` (spec-map Decisions: Accounts; OWASP cheat sheet). */

import { DEFAULT_PASSWORD_HASH_MEMORY_KIB, MIN_PASSWORD_HASH_MEMORY_KIB } from "../../config/env.ts";
import { offTheClock } from "../../lib/deadline.ts";

export { DEFAULT_PASSWORD_HASH_MEMORY_KIB, MIN_PASSWORD_HASH_MEMORY_KIB };
/** argon2id passes over memory (OWASP: t = 2 at 19 MiB). */
const TIME_COST = 2;

let memoryKib = DEFAULT_PASSWORD_HASH_MEMORY_KIB;
let dummy: { kib: number; hash: Promise<string> } | undefined;

/**
 * Sets the memory of every later hash, KiB.
 * @throws RangeError below {@link MIN_PASSWORD_HASH_MEMORY_KIB} or above 4 GiB (config.ts refuses such values at start).
 */
export function setPasswordHashMemory(kib: number): void {
  if (!Number.isSafeInteger(kib) || kib < MIN_PASSWORD_HASH_MEMORY_KIB || kib > 4_194_304)
    throw new RangeError(`password hash memory must be ${MIN_PASSWORD_HASH_MEMORY_KIB}..4194304 KiB`);
  memoryKib = kib;
}

/**
 * The argon2id hash of `password` (PHC string `$argon2id$v=19$m=…,t=2,p=1$…`). Off the request's database
 * deadline (src/lib/deadline.ts): it is CPU work, seconds on a busy machine, not a database wait.
 */
export function hashPassword(password: string): Promise<string> {
  return offTheClock(() =>
    Bun.password.hash(password, { algorithm: "argon2id", memoryCost: memoryKib, timeCost: TIME_COST }),
  );
}

/** True when `password` matches `hash` (any argon2 or bcrypt PHC string `Bun.password` knows); off the deadline too. */
export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return offTheClock(() => Bun.password.verify(password, hash));
}

/** A hash to verify unknown emails against, so they cost what a wrong password costs. */
export function dummyPasswordHash(): Promise<string> {
  if (dummy?.kib !== memoryKib) dummy = { kib: memoryKib, hash: hashPassword(crypto.randomUUID()) };
  return dummy.hash;
}
