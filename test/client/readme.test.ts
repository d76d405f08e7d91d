/**
 * README: the README's walkthrough cannot drift. Its curl commands
 * are extracted from README.md and run by `bash` with the real `curl` against
 * the real service started as `bun start` runs it, with the key the first
 * start printed (the README shows that log line too). Only the host:port is
 * rewritten to the test's port; quoting, headers and query strings run as
 * written.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startService, type RunningService } from "./service.ts";

const README = readFileSync(join(import.meta.dir, "../../README.md"), "utf8");
let svc: RunningService;

beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  expect(await svc?.stop()).toBe(0);
});

/** The `curl …` lines of the Walkthrough section's shell blocks. */
function walkthroughCurls(): string[] {
  const section = README.split(/^## /m).find((s) => s.startsWith("Walkthrough"));
  if (!section) throw new Error("README has no Walkthrough section");
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks.flatMap((b) => b.split("\n")).filter((l) => l.trim().startsWith("curl "));
}

test("the README shows the start command and the key line the first start prints", () => {
  expect(README).toContain("bun start");
  const line = svc
    .stdout()
    .split("\n")
    .find((l) => l.includes("API key (shown once)"));
  expect(line).toBeDefined();
  const printed = JSON.parse(line!) as { level: string; msg: string };
  const shown = /"level":"(\w+)","msg":"([^"]*API key \(shown once\): )ctk_/.exec(README);
  expect(shown, "README key line").not.toBeNull();
  expect([printed.level, printed.msg.replace(/ctk_\S+$/, "")]).toEqual([shown![1]!, shown![2]!]);
});

test("every curl command of the README walkthrough answers 200 with a success envelope", async () => {
  const curls = walkthroughCurls();
  expect(curls.length).toBeGreaterThanOrEqual(3);
  for (const line of curls) {
    const cmd = line.replaceAll("https://localhost:8443", svc.baseUrl);
    expect(cmd, "the README uses https://localhost:8443").not.toBe(line);
    const proc = Bun.spawn(["bash", "-c", `${cmd} -sS -w '\\n%{http_code}'`], {
      env: { ...process.env, KEY: svc.key },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    expect(`${line} → exit ${code} ${err}`).toBe(`${line} → exit 0 `);
    const status = out.slice(out.lastIndexOf("\n") + 1);
    const body = JSON.parse(out.slice(0, out.lastIndexOf("\n")));
    expect(`${line} → ${status}`).toBe(`${line} → 200`);
    expect(body.success).toBe(true);
  }
}, 30_000);
