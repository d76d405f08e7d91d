/**
 * An error nothing in the service catches (a library throwing from a timer, a promise nobody awaits),
 * planted by a preload (test/ops/crash-preload.ts) once the real service is up: one JSON log line
 * naming it, no stack trace anywhere in the output, every buffered log line written, and exit 1 (for the orchestrator to restart it)
 * after what started is stopped.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { freePort, spawnService } from "./process.ts";

let tdb: TestDatabase;
const dataDir = mkdtempSync(join(tmpdir(), "ct-crash-"));
// One key for both starts: the database remembers the first one (a replica with another key is refused).
const secretsKey = randomBytes(32).toString("base64url");
beforeAll(async () => {
  tdb = await createTestDatabase({ max: 1 });
});
afterAll(async () => {
  await tdb?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

for (const [kind, what, message] of [
  ["throw", "uncaught error", "planted error"],
  ["reject", "unhandled rejection", "planted rejection"],
] as const) {
  test(`${what}: one JSON line without a stack trace, then exit 1`, async () => {
    const env = {
      DATABASE_URL: tdb.url,
      SECRETS_KEY: secretsKey,
      DATA_DIR: dataDir,
      PORT: String(freePort()),
      ADMIN_PORT: String(freePort()),
      CRASH_KIND: kind,
    };
    const p = spawnService(env, "src/main.ts", ["--preload", join(import.meta.dir, "crash-preload.ts")]);
    expect(await p.exited).toBe(1);
    const line = p.lines().find((l) => l.level === "error" && l.msg === `${what}; stopping`);
    expect(line?.error).toEqual({ name: "Error", message });
    // The buffered log was flushed before the exit: the access line of the request just before the error is there.
    expect(p.lines().find((l) => l.msg === "request" && l.request_id === `before-crash-${kind}`)).toMatchObject({
      route: "/v1/couriers",
      status: 401,
    });
    const output = p.stdout() + p.stderr();
    expect(output).not.toMatch(/^\s+at /m); // no stack frame
    expect(output).not.toContain("crash-preload.ts"); // no source path
    expect(p.stderr()).toBe("");
  }, 60_000);
}
