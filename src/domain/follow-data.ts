/** The merchant's own `reference` and `metadata` on a follow, never on the shipment (docs/shipments.md). */

/** Bounds on `reference` and `metadata`: characters (code points), keys. */
export const MAX_REFERENCE_CHARS = 128;
export const MAX_METADATA_KEYS = 20;
const MAX_METADATA_KEY_CHARS = 40;
export const MAX_METADATA_VALUE_CHARS = 500;
/** A metadata key: 1 to 40 of ASCII letters, digits, `_`, `.` and `-` (safe in a query string, a log line, a CSV header). */
export const METADATA_KEY_PATTERN = `^[A-Za-z0-9_.-]{1,${MAX_METADATA_KEY_CHARS}}$`;

/** A follow's metadata: key → value, at most {@link MAX_METADATA_KEYS} keys. */
export type Metadata = Record<string, string>;
/** A change to a follow's metadata: a string sets the key, null removes it, an absent key stays as it was. */
export type MetadataPatch = Record<string, string | null>;

/** `current` with `patch` applied (null removes a key), as a new object; the caller checks the key count. */
export function applyMetadataPatch(current: Metadata, patch: MetadataPatch): Metadata {
  // A Map, then fromEntries: a key spelled `__proto__` is a key like any other.
  const out = new Map(Object.entries(current));
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) out.delete(k);
    else out.set(k, v);
  }
  return Object.fromEntries(out);
}
