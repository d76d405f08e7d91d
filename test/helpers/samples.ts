/**
 * Reads a courier fixture from `test/fixtures/couriers/<courier>/<file>`: the
 * real payloads the adapter tests parse. Each folder's `SOURCE.md` names where
 * every file was published and what was edited.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const FIXTURES_DIR = join(import.meta.dir, "../fixtures/couriers");

/** The text of `name`, a path under the fixtures folder such as `"dhl/unified-track.json"`. */
export function sample(name: string): string {
  return readFileSync(join(FIXTURES_DIR, name), "utf8");
}
