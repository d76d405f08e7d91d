/**
 * The typed client as an npm package, the way a client developer gets it: the README's build-and-pack lines as
 * written (`bun run client:build`, `npm pack`, the tarball's absolute path in `TGZ`), then `npm install "$TGZ"` from
 * an empty folder outside the repository, offline (its runtime dependencies are packed from the repo's
 * node_modules, so a fresh CI machine needs no registry), then a script importing `@courier-tracking/client` calls
 * the running service from Node and from Bun: track, follow in bulk, verify a Standard Webhooks signature. The
 * consumer's TypeScript resolves the package's types through `exports`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startService, type RunningService } from "./service.ts";

const ROOT = join(import.meta.dir, "..", "..");
const PKG_DIR = join(ROOT, "clients", "typescript");
const pkg = JSON.parse(readFileSync(join(PKG_DIR, "package.json"), "utf8"));
const TARBALL = join(PKG_DIR, `courier-tracking-client-${pkg.version}.tgz`);

/** The README's "Typed client" shell block: build and pack, remember the tarball's path, install it elsewhere. */
function readmeClientLines(): [string, string, string] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const block = /^## Typed client\n[\s\S]*?```sh\n([\s\S]*?)```/m.exec(readme)?.[1];
  if (!block) throw new Error("README's Typed client section has no sh block");
  const lines = block.trim().split("\n");
  expect(lines).toHaveLength(3);
  return lines as [string, string, string];
}

let svc: RunningService;
let work: string;
let app: string;

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", env: { ...process.env, ...env }, timeout: 110_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The runtime dependency closure of the client, as installed (hoisted) in the repo's node_modules. */
function dependencyClosure(): string[] {
  const seen = new Set<string>();
  const visit = (deps: Record<string, string> | undefined) => {
    for (const name of Object.keys(deps ?? {})) {
      if (seen.has(name)) continue;
      seen.add(name);
      visit(JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")).dependencies);
    }
  };
  visit(pkg.dependencies);
  return [...seen];
}

// What a client developer writes (the README's examples, shortened), run under Node and under Bun.
const CONSUMER = `
import { createTrackingClient, verifyStandardWebhook, verifyServiceSignature, Webhook } from "@courier-tracking/client";
const api = createTrackingClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });
const tracked = await api.GET("/v1/track", { params: { query: { courier: "auto", tracking_number: "1Z12345E0205277680" } } });
const numbers = ["5555555555121", "5555555555132"];
const followed = await api.POST("/v1/shipments", {
  body: { shipments: numbers.map((tracking_number) => ({ courier: "delhivery", tracking_number })) },
  params: { header: { "Idempotency-Key": "package-" + process.env.RUNTIME } },
});
const rotated = await api.POST("/v1/webhooks/rotate-secret");
const secret = rotated.data.data.secret;
const body = JSON.stringify({ type: "tracking.delivered" });
const headers = { "webhook-id": "msg_1", "webhook-timestamp": String(Math.floor(Date.now() / 1000)) };
headers["webhook-signature"] = new Webhook(secret).sign(headers["webhook-id"], new Date(), body);
console.log(JSON.stringify({
  runtime: process.env.RUNTIME,
  track: [tracked.response.status, tracked.data?.detected_courier],
  follow: [followed.response.status, followed.data?.data.shipments.map((s) => s.result)],
  webhook: [verifyStandardWebhook(secret, body, headers), verifyStandardWebhook(secret, body + " ", headers), verifyServiceSignature(secret, body, "sha256=00")],
}));
`;

const CONSUMER_TS = `
import { createTrackingClient, type components, type TrackingClient } from "@courier-tracking/client";
const api: TrackingClient = createTrackingClient({ baseUrl: "https://localhost", apiKey: "ctk_x" });
export async function courier(): Promise<string | undefined> {
  const r = await api.GET("/v1/track", { params: { query: { courier: "auto", tracking_number: "1Z12345E0205277680" } } });
  return r.data?.detected_courier;
}
// @ts-expect-error: the types know the query's parameters
api.GET("/v1/track", { params: { query: { courrier: "ups" } } });
export type Problem = components["schemas"] extends object ? true : never;
`;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "ct-client-pkg-"));
  app = join(work, "app");
  mkdirSync(join(work, "deps"));
  mkdirSync(app);
  svc = await startService();
}, 60_000);
afterAll(async () => {
  expect(await svc?.stop()).toBe(0);
  rmSync(work, { recursive: true, force: true });
  rmSync(join(PKG_DIR, "dist"), { recursive: true, force: true });
  rmSync(TARBALL, { force: true });
}, 30_000);

test("built and packed by the README's lines, installed offline by its absolute path into an empty folder: ESM JavaScript, declarations, README and LICENSE, nothing else", () => {
  const [make, remember, install] = readmeClientLines();
  // The install line runs in the reader's own project: only `cd` differs here, and the path it installs is absolute.
  expect(install).toStartWith('cd /path/to/your/project && npm install "$TGZ"');
  const printed = run("bash", ["-euo", "pipefail", "-c", `${make}\n${remember}\nprintf '%s' "$TGZ"`], ROOT);
  const tarball = printed.split("\n").at(-1)!;
  expect(tarball).toBe(TARBALL);
  const listed = run("tar", ["-tzf", tarball], work).trim().split("\n").sort();
  expect(listed).toEqual([
    "package/LICENSE",
    "package/README.md",
    "package/dist/index.d.ts",
    "package/dist/index.js",
    "package/dist/schema.d.ts",
    "package/package.json",
  ]);
  const closure = dependencyClosure().map((dep) => join(ROOT, "node_modules", dep));
  run("npm", ["pack", "--ignore-scripts", "--pack-destination", join(work, "deps"), ...closure], work);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  const deps = readdirSync(join(work, "deps")).map((f) => join(work, "deps", f));
  // A cache of its own: nothing comes from this machine's npm cache or the network.
  run(
    "npm",
    [
      "install",
      "--offline",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      "--cache",
      join(work, "npm-cache"),
      tarball,
      ...deps,
    ],
    app,
  );
  const installed = JSON.parse(
    readFileSync(join(app, "node_modules", "@courier-tracking", "client", "package.json"), "utf8"),
  );
  expect([installed.name, installed.version, installed.license]).toEqual([
    "@courier-tracking/client",
    pkg.version,
    "Apache-2.0",
  ]);
}, 120_000);

for (const runtime of ["node", "bun"] as const)
  test(`imported by name and calling the service under ${runtime === "node" ? "Node" : "Bun"}`, () => {
    writeFileSync(join(app, "consumer.js"), CONSUMER);
    // The service's self-signed certificate is trusted the way a user of a development set-up would (it is its own CA).
    const out = run(runtime === "node" ? "node" : process.execPath, ["consumer.js"], app, {
      BASE_URL: svc.baseUrl,
      API_KEY: svc.key,
      RUNTIME: runtime,
      NODE_EXTRA_CA_CERTS: join(svc.dataDir, "tls", "cert.pem"),
    });
    expect(JSON.parse(out.trim().split("\n").at(-1)!)).toEqual({
      runtime,
      track: [200, "ups"],
      follow: [202, ["accepted", "accepted"]],
      webhook: [true, false, false],
    });
  }, 60_000);

test("a TypeScript consumer gets the types through exports (nodenext), and the README's examples type-check", () => {
  writeFileSync(join(app, "consumer.ts"), CONSUMER_TS);
  const examples = [...readFileSync(join(PKG_DIR, "README.md"), "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map(
    (m) => m[1]!,
  );
  expect(examples).toHaveLength(4);
  examples.forEach((code, i) => {
    writeFileSync(join(app, `readme-${i}.ts`), `${code}export {};\n`);
  });
  const compilerOptions = {
    ...{
      module: "nodenext",
      moduleResolution: "nodenext",
      target: "es2022",
      lib: ["es2023", "dom"],
      strict: true,
      noEmit: true,
    },
    ...{ typeRoots: [join(ROOT, "node_modules", "@types")], types: ["node"] }, // the webhook example is a node:http server
  };
  writeFileSync(
    join(app, "tsconfig.json"),
    JSON.stringify({ compilerOptions, files: ["consumer.ts", ...examples.map((_, i) => `readme-${i}.ts`)] }),
  );
  // TypeScript 5 as a consumer's project compiles (`tsc --init` sets skipLibCheck): the imports resolve through
  // `exports` and the consumer's code checks against the types. The declarations themselves (the package's, and
  // @types/node and lib.dom, which cost TypeScript 5 about 9 s of CPU here) are checked in full by TypeScript 7,
  // the project's checker, in under 2 s.
  const tsc5 = createRequire(import.meta.url).resolve("typescript5/bin/tsc");
  run(process.execPath, [tsc5, "-p", "tsconfig.json", "--skipLibCheck"], app);
  run(join(ROOT, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.json", "--singleThreaded"], app);
}, 120_000);
