/** Test helper: a value the test expects to be there, narrowed; a missing one fails the test by name. */
export function present<T>(value: T | null | undefined, what = "value"): T {
  if (value === null || value === undefined) throw new Error(`expected ${what} to be present`);
  return value;
}
