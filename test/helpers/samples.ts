/**
 * Reads a courier fixture from its courier folder, `src/modules/couriers/carriers/<courier>/fixtures/<file>`: the
 * real payloads the adapter tests parse. Each fixtures folder's `SOURCE.md` names where every file was published and
 * what was edited.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The folder holding one folder per courier (each with its `fixtures/`). */
export const CARRIERS_DIR = join(import.meta.dir, "../../src/modules/couriers/carriers");

/** The text of `name`, `<courier>/<file>` such as `"dhl/unified-track.json"` (read from `<courier>/fixtures/<file>`). */
export function sample(name: string): string {
  const [courier, ...file] = name.split("/");
  return readFileSync(join(CARRIERS_DIR, courier!, "fixtures", ...file), "utf8");
}
