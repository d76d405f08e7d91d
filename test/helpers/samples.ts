/** Reads a courier sample from ../shared/courier-samples (the real payloads used as adapter fixtures). */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const SAMPLES_DIR = process.env.COURIER_SAMPLES_DIR ?? join(import.meta.dir, "../../../shared/courier-samples");

export function sample(name: string): string {
  return readFileSync(join(SAMPLES_DIR, name), "utf8");
}
