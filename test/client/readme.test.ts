/**
 * README: the README's walkthrough cannot drift. Its curl commands
 * are extracted from README.md and run by `bash` with the real `curl` against
 * the real service started as `bun start` runs it, with the key the first
 * start printed (the README shows that log line too). Only the host:port is
 * rewritten to the test's port; quoting, headers and query strings run as
 * written. The walkthrough's tracking numbers are ones the account follows, so its shipments and events lists
 * are not empty. The README's claims about installing and CI are checked against `.ci/run` and the configuration.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/configure.ts";
import { startService, type RunningService } from "./service.ts";

const ROOT = join(import.meta.dir, "..", "..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const CI_RUN = readFileSync(join(ROOT, ".ci", "run"), "utf8");
const section = (title: string) => {
  const found = README.split(/^## /m).find((s) => s.startsWith(title));
  if (!found) throw new Error(`README has no ${title} section`);
  return found;
};
let svc: RunningService;

beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  expect(await svc?.stop()).toBe(0);
});

/** The `curl …` lines of the Walkthrough section's shell blocks. */
function walkthroughCurls(): string[] {
  const blocks = [...section("Walkthrough").matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
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

test("every curl command of the README walkthrough answers 200 with a success envelope; what it tracks is followed and has events", async () => {
  const curls = walkthroughCurls();
  const bodies = new Map<string, any>();
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
    bodies.set(/https:\/\/localhost:8443(\/[^?" ]*)/.exec(line)![1]!, body);
  }
  // The two lookups' numbers are in transit (digit 1), so the lists the walkthrough shows next are not empty.
  expect(
    bodies
      .get("/v1/shipments")
      .data.shipments.map((s: any) => `${s.courier}/${s.tracking_number}`)
      .sort(),
  ).toEqual(["delhivery/1234567890121", "ups/1Z12345E0205277671"]);
  const events = bodies.get("/v1/events").data.events as { type: string; tracking_number: string }[];
  expect(events.length).toBeGreaterThanOrEqual(1);
  expect(events.every((e) => e.tracking_number === "1234567890121")).toBe(true); // the advanced one
}, 30_000);

test("the Quick start installs the Bun version CI pins and says it needs root; .ci/run's needs are stated", () => {
  const pinned = /npm install -g[^\n]* bun@(\d+\.\d+\.\d+)/.exec(CI_RUN)?.[1];
  expect(pinned, ".ci/run pins bun").toBeDefined();
  const quick = section("Quick start");
  expect(quick).toContain(`npm install -g bun@${pinned} && bun install --frozen-lockfile && bun start`);
  expect(quick).toContain(`bun-v${pinned}`); // the installer without root
  expect(quick).toContain("needs root");
  expect(quick).toContain("Debian 12 (bookworm), as root");
  for (const pkg of ["chromium-headless-shell", "python3", "golang-go", "php-cli", "prometheus"]) {
    expect(CI_RUN).toContain(pkg);
    expect(quick).toContain(pkg);
  }
});

test("with DATABASE_URL the service listens on every interface unless HOST says otherwise, as the README says", () => {
  const db = { DATABASE_URL: "postgres://u@127.0.0.1:5432/x", SECRETS_KEY: "a".repeat(43) };
  expect(loadConfig(db).host).toBe("0.0.0.0");
  expect(loadConfig({ ...db, HOST: "127.0.0.1" }).host).toBe("127.0.0.1");
  expect(loadConfig({}).host).toBe("127.0.0.1");
  expect(README).toContain("With `DATABASE_URL` the service listens on all\ninterfaces (`HOST=0.0.0.0`) by default");
});

test("CI's lint step passes and prints only errors (a line, not the warnings); `bun run lint` still reports warnings", async () => {
  const step = CI_RUN.split("\n").find((l) => l.startsWith("bun run lint"));
  expect(step).toBe("bun run lint --diagnostic-level=error");
  const proc = Bun.spawn(["bash", "-c", step!], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  expect(code, `${out}${err}`).toBe(0);
  const lines = `${out}${err}`.split("\n").filter((l) => l.trim() !== "");
  expect(lines.length, lines.slice(0, 20).join("\n")).toBeLessThanOrEqual(3);
  const script = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.lint as string;
  expect(script).not.toContain("diagnostic-level");
  // The installs before it print errors only.
  for (const line of CI_RUN.split("\n").filter((l) => /apt-get (-qq )?install/.test(l)))
    expect(line).toMatch(/apt-get -qq install .*>\/dev\/null/);
  expect(CI_RUN).toContain("bun install --frozen-lockfile --no-progress --no-summary\n");
}, 60_000);
