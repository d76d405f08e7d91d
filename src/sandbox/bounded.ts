/**
 * The simulator's per-number memory (first-seen times, call counts, 17TRACK
 * registrations) is bounded: a long-running sandbox service sees an endless
 * stream of new tracking numbers, and without a bound each one would be kept
 * for the life of the process (docs/performance.md, P5: RSS stays bounded
 * under load).
 */

/**
 * Most tracking numbers one simulator map keeps. Past it the number seen
 * longest ago is forgotten (a Map iterates in insertion order); if it comes
 * back, its scenario timeline starts again from that moment, as for a new number.
 */
export const SIM_MAX_NUMBERS = 100_000;

/**
 * `map.set(key, value)`, first dropping the oldest entry when `key` is new and
 * the map already holds `limit` entries. An existing key keeps its place.
 */
export function rememberBounded<K, V>(map: Map<K, V>, key: K, value: V, limit = SIM_MAX_NUMBERS): void {
  if (map.size >= limit && !map.has(key)) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}
