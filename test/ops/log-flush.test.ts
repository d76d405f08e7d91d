/**
 * The buffered log destination (docs/logging.md, "Destination") in a real process: lines wait in a buffer,
 * and a SIGTERM writes every one of them before the exit — the access line of the last request answered
 * before the signal included. (The fatal path is checked in crash.test.ts.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { freePort, insecureFetch, spawnService } from "./process.ts";

let tdb: TestDatabase;
const dataDir = mkdtempSync(join(tmpdir(), "ct-logflush-"));
beforeAll(async () => {
  tdb = await createTestDatabase({ max: 1 });
});
afterAll(async () => {
  await tdb?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

test("SIGTERM right after a burst of requests: every access line, the last one included, is on stdout after exit 0", async () => {
  const port = freePort();
  // The default configuration: info (spawnService sets it, as unset would), access log on, every role.
  const env = {
    DATABASE_URL: tdb.url,
    SECRETS_KEY: randomBytes(32).toString("base64url"),
    DATA_DIR: dataDir,
    PORT: String(port),
  };
  const p = spawnService(env);
  await p.waitForLine((l) => String(l.msg).startsWith("listening on https://"), 30_000);

  const ids = Array.from({ length: 40 }, (_, i) => `flush-${i}`);
  // Concurrent, then one last request alone: its answer is in before the signal is sent.
  await Promise.all(
    ids
      .slice(0, -1)
      .map((id) =>
        insecureFetch(`https://127.0.0.1:${port}/v1/couriers`, { headers: { "x-request-id": id } }).then((r) =>
          r.text(),
        ),
      ),
  );
  const last = await insecureFetch(`https://127.0.0.1:${port}/v1/couriers`, {
    headers: { "x-request-id": ids.at(-1)! },
  });
  expect(last.status).toBe(401);
  p.kill("SIGTERM");

  expect(await p.exited).toBe(0);
  const lines = p.lines();
  const access = lines.filter((l) => l.msg === "request").map((l) => l.request_id);
  expect(access.sort()).toEqual([...ids].sort());
  expect(lines.at(-1)!.msg).toBe("stopped");
  // Whole lines only: nothing cut in the middle by the exit.
  expect(p.stdout().endsWith("\n")).toBe(true);
  expect(
    p
      .stdout()
      .split("\n")
      .filter(Boolean)
      .every((l) => l.startsWith("{") && l.endsWith("}")),
  ).toBe(true);
}, 60_000);
