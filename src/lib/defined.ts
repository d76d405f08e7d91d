/** Internal invariants: values the surrounding code guarantees, checked at run time instead of asserted with `!`. */

/** A value the code guarantees was missing: a bug of ours, never the caller's input (it answers 500). */
class InvariantError extends Error {}

/** `value` when neither undefined nor null; throws {@link InvariantError} naming `what` otherwise. */
export function defined<T>(value: T | null | undefined, what: string): T {
  if (value === undefined || value === null) throw new InvariantError(`internal: ${what} is missing`);
  return value;
}
