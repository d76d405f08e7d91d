/**
 * The predictions rebuild runs at 03:30 UTC whatever time zone the process has (docs/predictions.md): checked in a
 * child process with TZ set to zones east and west of UTC.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { PREDICTIONS_CRON, PREDICTIONS_PATTERN } from "../../src/scheduler/index.ts";

const ROOT = join(import.meta.dir, "../..");
const SCRIPT = `
import { Cron } from "croner";
const c = new Cron(${JSON.stringify(PREDICTIONS_PATTERN)}, { ...${JSON.stringify(PREDICTIONS_CRON)}, startAt: "2026-03-07T12:00:00Z" });
console.log(JSON.stringify(c.nextRuns(3, new Date("2026-03-07T12:00:00Z")).map((d) => d.toISOString())));
c.stop();
`;

describe("predictions schedule", () => {
  for (const tz of ["UTC", "Asia/Kolkata", "America/Los_Angeles"])
    test(`03:30 UTC with TZ=${tz}, across a daylight-saving change`, () => {
      const r = Bun.spawnSync(["bun", "-e", SCRIPT], { cwd: ROOT, env: { ...process.env, TZ: tz } });
      expect(r.exitCode).toBe(0);
      expect(JSON.parse(r.stdout.toString())).toEqual([
        "2026-03-08T03:30:00.000Z",
        "2026-03-09T03:30:00.000Z",
        "2026-03-10T03:30:00.000Z",
      ]);
    });
});
