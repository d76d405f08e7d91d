/** The simulator's per-number memory is bounded, or an endless stream of numbers would grow it for good (docs/performance.md, P5). */

/** Most numbers one simulator map keeps; past it the oldest is forgotten and starts afresh if it comes back. */
export const SIM_MAX_NUMBERS = 100_000;

/** `map.set(key, value)`, first dropping the oldest entry when `key` is new and the map is full. */
export function rememberBounded<K, V>(map: Map<K, V>, key: K, value: V, limit = SIM_MAX_NUMBERS): void {
  if (map.size >= limit && !map.has(key)) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}
