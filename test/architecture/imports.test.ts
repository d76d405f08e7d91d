/**
 * The import graph of src/ has no loops: none between folders (src/<dir>, src/modules/<name>;
 * scripts/import-graph.ts), none between files (madge, scripts/file-cycles.ts), and the layering rules below hold.
 * Type-only imports count. A new loop fails here with the imports that make it.
 */
import { describe, expect, test } from "bun:test";
import { fileCycles } from "../../scripts/file-cycles.ts";
import {
  findKnots,
  folderLoopProblems,
  folderOf,
  layerViolations,
  readImportGraph,
  toFolderGraph,
  type AllowedEdge,
  type Graph,
  type LayerRule,
} from "../../scripts/import-graph.ts";

/**
 * Folder edges that still close a loop because the files that make them are being changed by other work. Each names
 * the imports and what removes them. An entry that no longer closes a loop fails the test, so this list only
 * shrinks: delete the entry then. Never add one.
 */
const ALLOWLIST: readonly AllowedEdge[] = [];

/** A courier's sandbox twin: simulator code kept in its courier folder (`twin.ts`, and its parts `twin-<part>.ts`). */
const TWIN_FILE = /^src\/modules\/couriers\/carriers\/[a-z0-9]+\/twin(-[a-z]+)?\.ts$/;
/** Who may load a twin file: its courier's declaration (`index.ts`), or its own `twin.ts` loading its parts. */
const TWIN_LOADER = /^src\/modules\/couriers\/carriers\/[a-z0-9]+\/(index|twin)\.ts$/;
/** Who may use the twin kit: the twins, the simulator, and the declaration's type (`adapters/define.ts`). */
const KIT_USER = /^(src\/sandbox\/|src\/twin-kit\/|src\/modules\/couriers\/adapters\/define\.ts$)/;

/** Who may import whom, beyond "no loops". */
const RULES: readonly LayerRule[] = [
  {
    from: "src/domain/",
    to: "src/",
    allowTo: "src/domain/",
    why: "the domain vocabulary imports nothing of the modules",
  },
  {
    from: "src/lib/",
    to: "src/",
    allowTo: "src/lib/",
    why: "lib holds generic helpers that import nothing of the app",
  },
  { from: "src/db/", to: "src/modules/", why: "the schema uses domain types, never a module's" },
  {
    from: "src/modules/",
    to: "src/sandbox/",
    why: "modules know nothing of the simulator; it registers itself through CourierSimulator",
  },
  {
    from: "src/",
    to: TWIN_FILE,
    allowFrom: TWIN_LOADER,
    why: "a courier's twin is simulator code: only its folder's declaration loads it, for the simulator",
  },
  {
    from: "src/",
    to: "src/twin-kit/",
    allowFrom: new RegExp(`${TWIN_FILE.source}|${KIT_USER.source}`),
    why: "the twin kit is for the twins and the simulator; an adapter talks to the real courier",
  },
  {
    from: "src/twin-kit/",
    to: "src/",
    allowTo: "src/twin-kit/",
    why: "the twin kit is the lower layer the simulator and the twins share: it imports nothing of the app",
  },
  { from: "src/domain/", to: "src/sandbox/", why: "the domain knows nothing of the simulator" },
  {
    from: "src/",
    to: "src/app.ts",
    allowFrom: "src/main.ts",
    why: "only main.ts composes the app; dependency types live in src/deps.ts and src/core-deps.ts",
  },
  { from: "src/", to: "src/main.ts", why: "main.ts is the entry point, imported by nobody" },
  {
    from: "src/modules/",
    to: "src/openapi/",
    why: "the OpenAPI document reads every module's schemas; a module that needs it (postman) is handed it by the composition",
  },
  {
    from: "src/http/",
    to: "src/openapi/",
    why: "src/http holds the plugins the modules use; the document is assembled above them",
  },
  { from: "src/jobs/", to: "src/modules/", why: "the job runner knows no pipeline: each brings its claim and task" },
];

const graph = readImportGraph("src");

describe("the import graph of src/", () => {
  test("no loop between folders outside the allowlist, and every allowlisted edge still closes one", () => {
    expect(folderLoopProblems(toFolderGraph(graph), ALLOWLIST)).toEqual([]);
  });

  test("layering: domain and lib import nothing of the app, db and modules know no simulator, nobody imports app.ts", () => {
    expect(layerViolations(graph, RULES)).toEqual([]);
  });

  test("a courier folder imports no other courier's folder, and every courier folder has its declaration, adapter, wire schema, reasons and twin", () => {
    const carrierOf = (file: string) => /^src\/modules\/couriers\/carriers\/([a-z0-9]+)\//.exec(file)?.[1];
    const crossings = [...graph].flatMap(([from, targets]) =>
      [...targets]
        .filter((to) => carrierOf(from) && carrierOf(to) && carrierOf(from) !== carrierOf(to))
        .map((to) => `${from} -> ${to}`),
    );
    expect(crossings).toEqual([]);
    const carriers = new Set([...graph.keys()].map(carrierOf).filter((c) => c !== undefined));
    expect(carriers.size).toBeGreaterThanOrEqual(10);
    for (const c of carriers)
      for (const f of ["index.ts", "adapter.ts", "wire.ts", "reasons.ts", "twin.ts"])
        expect(graph.has(`src/modules/couriers/carriers/${c}/${f}`)).toBe(true);
  });

  test("no loop between files (the graph reader, and madge independently)", async () => {
    expect(findKnots(graph)).toEqual([]);
    const madge = await fileCycles("src");
    // madge must have read every file: a parser that failed silently would read none and find no cycle.
    expect(madge.files).toBe(graph.size);
    expect(madge.cycles).toEqual([]);
  }, 120_000);
});

describe("the checks fail on a loop", () => {
  const g = (edges: [string, string][]): Graph => {
    const out: Graph = new Map();
    for (const [a, b] of edges) {
      if (!out.has(a)) out.set(a, new Set());
      if (!out.has(b)) out.set(b, new Set());
      out.get(a)!.add(b);
    }
    return out;
  };

  test("folders: src/<dir>, src/modules/<name>; files directly in src/ stand alone", () => {
    expect(folderOf("src/modules/couriers/carriers/dhl/adapter.ts")).toBe("src/modules/couriers");
    expect(folderOf("src/http/auth.ts")).toBe("src/http");
    expect(folderOf("src/db/schema/shipments.ts")).toBe("src/db");
    expect(folderOf("src/sandbox/server.ts")).toBe("src/sandbox");
    expect(folderOf("src/twin-kit/scenario.ts")).toBe("src/twin-kit");
    expect(folderOf("src/deps.ts")).toBe("src/deps.ts");
  });

  test("a new loop between two modules is reported with the imports that make it", () => {
    const synthetic = g([
      ["src/modules/a/x.ts", "src/modules/b/y.ts"],
      ["src/modules/b/y.ts", "src/modules/a/z.ts"],
      ["src/modules/a/z.ts", "src/lib/ids.ts"],
    ]);
    const problems = folderLoopProblems(toFolderGraph(synthetic), []);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain("folder loop src/modules/a <-> src/modules/b");
    expect(problems[0]).toContain("src/modules/b/y.ts -> src/modules/a/z.ts");
    expect(
      folderLoopProblems(toFolderGraph(synthetic), [{ edge: "src/modules/b -> src/modules/a", why: "test" }]),
    ).toEqual([]);
  });

  test("a loop through three folders, and a second loop beside an allowlisted one, are both caught", () => {
    const three = g([
      ["src/modules/a/x.ts", "src/modules/b/y.ts"],
      ["src/modules/b/y.ts", "src/http/p.ts"],
      ["src/http/p.ts", "src/modules/a/x.ts"],
    ]);
    expect(folderLoopProblems(toFolderGraph(three), [])[0]).toContain("src/http <-> src/modules/a <-> src/modules/b");
    const beside = g([
      ["src/modules/a/x.ts", "src/modules/b/y.ts"],
      ["src/modules/b/y.ts", "src/modules/a/x.ts"],
      ["src/modules/b/y.ts", "src/modules/c/w.ts"],
      ["src/modules/c/w.ts", "src/modules/b/v.ts"],
    ]);
    const problems = folderLoopProblems(toFolderGraph(beside), [
      { edge: "src/modules/a -> src/modules/b", why: "test" },
    ]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain("folder loop src/modules/b <-> src/modules/c");
  });

  test("an allowlisted edge that is gone, or no longer closes a loop, fails (the list only shrinks)", () => {
    const oneWay = toFolderGraph(g([["src/modules/a/x.ts", "src/modules/b/y.ts"]]));
    expect(folderLoopProblems(oneWay, [{ edge: "src/modules/a -> src/modules/b", why: "test" }])).toEqual([
      "allowlisted edge src/modules/a -> src/modules/b no longer closes a loop: remove it from the allowlist",
    ]);
    expect(folderLoopProblems(oneWay, [{ edge: "src/modules/b -> src/modules/a", why: "test" }])).toEqual([
      "allowlisted edge src/modules/b -> src/modules/a no longer exists: remove it from the allowlist",
    ]);
  });

  test("the real graph with one import added back (the registry reading the sandbox) fails both checks", () => {
    const injected: Graph = new Map([...graph].map(([k, v]) => [k, new Set(v)]));
    injected.get("src/modules/couriers/registry.ts")!.add("src/sandbox/server.ts");
    const problems = folderLoopProblems(toFolderGraph(injected), ALLOWLIST);
    const loop = (p: string) => p.includes("src/modules/couriers <-> src/sandbox");
    expect(
      problems.some((p) => loop(p) && p.includes("src/modules/couriers/registry.ts -> src/sandbox/server.ts")),
    ).toBe(true);
    expect(layerViolations(injected, RULES)).toEqual([
      `src/modules/couriers/registry.ts -> src/sandbox/server.ts (${RULES[3]!.why})`,
    ]);
  });

  test("a courier's twin may use the twin kit; its adapter may not, and only its folder's declaration loads a twin", () => {
    const injected: Graph = new Map([...graph].map(([k, v]) => [k, new Set(v)]));
    const dhl = (f: string) => `src/modules/couriers/carriers/dhl/${f}`;
    expect(injected.get(dhl("twin.ts"))?.has("src/twin-kit/twin.ts")).toBe(true);
    expect(injected.get(dhl("index.ts"))?.has(dhl("twin.ts"))).toBe(true);
    expect(injected.get("src/sandbox/server.ts")?.has("src/twin-kit/scenario.ts")).toBe(true);
    injected.get(dhl("adapter.ts"))!.add("src/twin-kit/scenario.ts");
    injected.get("src/modules/couriers/registry.ts")!.add(dhl("twin.ts"));
    injected.get("src/twin-kit/scenario.ts")!.add("src/modules/couriers/catalogue.ts");
    expect(layerViolations(injected, RULES)).toEqual([
      `${dhl("adapter.ts")} -> src/twin-kit/scenario.ts (${RULES[5]!.why})`,
      `src/modules/couriers/registry.ts -> ${dhl("twin.ts")} (${RULES[4]!.why})`,
      `src/twin-kit/scenario.ts -> src/modules/couriers/catalogue.ts (${RULES[6]!.why})`,
    ]);
  });

  test("madge finds a file-level cycle in a fixture, type-only imports included", async () => {
    const { cycles, files } = await fileCycles("test/architecture/fixtures/loop");
    expect(files).toBe(2);
    expect(cycles.map((c) => [...c].sort())).toEqual([["a.ts", "b.ts"]]);
  }, 120_000);
});
