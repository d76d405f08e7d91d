/**
 * docs/live-couriers.md names every variable each courier adapter reads, and
 * every courier that needs TRACK17_API_KEY. The tables are checked against
 * the adapters and the catalogue, and the doc's claim "all of a courier's
 * variables make it live, one missing keeps it in sandbox" is checked on the
 * real courier registry built from a parsed configuration.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/configure.ts";
import { FakeClock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { ADAPTERS } from "../../src/modules/couriers/adapters/index.ts";
import { COURIERS } from "../../src/modules/couriers/catalogue.ts";
import { createCourierBackends } from "../../src/modules/couriers/registry.ts";

const DOC = readFileSync(join(import.meta.dir, "../../docs/live-couriers.md"), "utf8");
const [ownApi, track17] = DOC.split("## Couriers through 17TRACK") as [string, string];
/** The table row of `slug` in `section`, as its backticked names. */
const row = (section: string, slug: string) => {
  const line = section.split("\n").find((l) => l.startsWith("|") && l.includes(`| \`${slug}\` |`));
  return line ? [...line.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]!) : undefined;
};

test("every courier with its own adapter lists exactly that adapter's credential variables and its base URL variable", () => {
  for (const c of COURIERS.filter((c) => c.adapter !== "track17")) {
    const adapter = ADAPTERS[c.adapter];
    expect(row(ownApi, c.slug), c.slug).toEqual([...adapter.credentialVars, `${adapter.envPrefix}_BASE_URL`]);
    expect(ownApi).toContain(`\`${adapter.envPrefix}_BASE_URL\` (default \`${adapter.defaultBaseUrl}\`)`);
  }
  expect(ADAPTERS.aramex.credentialVars).toHaveLength(6);
});

test("every courier served through 17TRACK is listed under TRACK17_API_KEY, and no other", () => {
  const listed = [...track17.matchAll(/^\| [^|]+ \| `([a-z0-9]+)` \|$/gm)].map((m) => m[1]!).sort();
  expect(listed).toEqual(
    COURIERS.filter((c) => c.adapter === "track17")
      .map((c) => c.slug)
      .sort(),
  );
  expect(ADAPTERS.track17.credentialVars).toEqual(["TRACK17_API_KEY"]);
  expect(track17).toContain(`\`TRACK17_BASE_URL\`, default \`${ADAPTERS.track17.defaultBaseUrl}\``);
});

test("the documented variables make a courier live; without any one of them it stays in sandbox", async () => {
  for (const c of COURIERS.filter((c) => c.adapter !== "track17")) {
    const vars = row(ownApi, c.slug)!;
    const credentials = vars.filter((v) => !v.endsWith("_BASE_URL"));
    // Loopback base URL: nothing is ever sent (availability only).
    const env = (omit?: string) =>
      Object.fromEntries([
        ...credentials.filter((v) => v !== omit).map((v) => [v, "x"]),
        [`${ADAPTERS[c.adapter].envPrefix}_BASE_URL`, "https://127.0.0.1:9"],
      ]);
    const availability = async (e: Record<string, string>) => {
      const backends = createCourierBackends({
        config: loadConfig({ COURIER_MODE: "sandbox", ...e }),
        clock: new FakeClock(),
        log: silentLogger,
        simulator: { baseUrlFor: () => "https://127.0.0.1:9", credential: () => "sandbox", route: () => undefined },
      });
      const a = backends.availability(c);
      await backends.close();
      return a;
    };
    expect(`${c.slug} ${await availability(env())}`).toBe(`${c.slug} live`);
    for (const v of credentials)
      expect(`${c.slug} without ${v}: ${await availability(env(v))}`).toBe(`${c.slug} without ${v}: sandbox`);
  }
});

test("README and docs/ cite no file outside the repository and no internal issue numbers", () => {
  const root = join(import.meta.dir, "../..");
  const files = ["README.md", ...new Bun.Glob("docs/*.md").scanSync({ cwd: root })];
  const leaks = files.flatMap((f) =>
    readFileSync(join(root, f), "utf8")
      .split("\n")
      .map((line, i) => ({ where: `${f}:${i + 1}`, line }))
      .filter(({ line }) => /CONTRACT(\.md| ?§| sections?| \d)|\bissue \d+|\.\.\/shared\//.test(line)),
  );
  expect(leaks).toEqual([]);
  expect(readFileSync(join(root, "README.md"), "utf8")).toContain("docs/live-couriers.md");
});
