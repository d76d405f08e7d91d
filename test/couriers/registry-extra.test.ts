/**
 * A courier is its folder plus one registry line (src/modules/couriers/carriers/README.md, "Adding a courier"): a
 * throw-away courier declared with defineCourier, added to the registry's list, reaches the catalogue, the courier
 * variables, the rate budget, the reasons and the simulator without another edit.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { courierVarPattern, parseConfig } from "../../src/config/index.ts";
import { COURIER_VARIABLES, loadConfig } from "../../src/configure.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { ADAPTERS } from "../../src/modules/couriers/adapters/index.ts";
import { defineCourier } from "../../src/modules/couriers/adapters/define.ts";
import { reasonOf } from "../../src/modules/couriers/adapters/reasons.ts";
import { CourierError, type CourierAdapter } from "../../src/modules/couriers/adapters/types.ts";
import { CARRIERS } from "../../src/modules/couriers/carriers/index.ts";
import { catalogueOf, COURIERS, type Courier } from "../../src/modules/couriers/catalogue.ts";
import { createCourierBackends } from "../../src/modules/couriers/registry.ts";
import { startSimulator } from "../../src/sandbox/server.ts";
import { sandboxCredential } from "../../src/twin-kit/credentials.ts";
import { latest } from "../../src/twin-kit/scenario.ts";
import { present } from "../helpers/present.ts";

/** The courier variables the registry declares (src/configure.ts hands the same prefixes to the config). */
const COURIER_VAR = courierVarPattern(COURIER_VARIABLES.prefixes);

/** The folder a new courier would bring: adapter, entry, budget, reasons, prefix and twin, in one declaration. */
const scratchAdapter: CourierAdapter = {
  id: "scratch",
  defaultBaseUrl: "https://api.scratch.invalid",
  envPrefix: "SCRATCH",
  credentialVars: ["SCRATCH_API_KEY"],
  async track(awb, ctx) {
    const res = await ctx.http.request({
      path: `/track/${awb}`,
      headers: { "x-api-key": ctx.credentials.SCRATCH_API_KEY ?? "" },
      signal: ctx.signal,
    });
    if (res.status === 404) throw new CourierError("not_found", "scratch: no shipment", 404);
    if (res.status !== 200) throw new CourierError("backend", `scratch: HTTP ${res.status}`, res.status);
    const body = JSON.parse(res.text) as { at: string; status: string };
    const checkpoint = {
      state: "in_transit" as const,
      subStatus: null,
      activity: body.status,
      location: "",
      localDate: body.at.slice(0, 10),
      localTime: body.at.slice(11, 16),
      at: body.at,
      rawCode: "SCR-1",
      rawStatus: body.status,
      remark: null,
    };
    return { checkpoints: [checkpoint], originCity: null, destinationCity: null, podUrl: null, remark: null };
  },
};

const scratch = defineCourier({
  id: "scratch",
  adapter: scratchAdapter,
  courier: {
    slug: "scratchpost",
    name: "Scratch Post",
    country: "international",
    awb: { pattern: /^SCR\d{8}$/, description: "SCR and 8 digits", example: "SCR12345678" },
  },
  rateLimit: { perSecond: 3, perDay: 0 },
  reasons: {
    rows: [
      {
        code: "SCR-NA",
        reason: "customer_unavailable",
        source: "this test",
        example: {
          state: "exception",
          subStatus: "delivery_attempt_failed",
          rawCode: "SCR-NA",
          activity: "Attempted",
          remark: null,
        },
      },
    ],
  },
  twin: {
    id: "scratch",
    handle(req, url, sim) {
      if (req.headers.get("x-api-key") !== sandboxCredential("SCRATCH_API_KEY"))
        return new Response("", { status: 401 });
      const awb = url.pathname.split("/").at(-1) ?? "";
      sim.count("scratch", awb);
      const s = sim.scenario(awb);
      if (s.kind !== "found") return new Response("", { status: 404 });
      return Response.json({ at: new Date(latest(s).at).toISOString(), status: latest(s).kind });
    },
  },
});

const registry = [...CARRIERS, scratch];

describe("a registry with one more folder", () => {
  test("the catalogue lists its courier in its place: international, with the couriers that have an adapter", () => {
    const catalogue = catalogueOf(registry);
    expect(catalogue.map((c) => c.slug)).toEqual([
      ...COURIERS.filter((c) => c.country === "india" || c.adapter !== "track17").map((c) => c.slug),
      "scratchpost",
      ...COURIERS.filter((c) => c.country === "international" && c.adapter === "track17").map((c) => c.slug),
    ]);
    expect(catalogue.find((c) => c.slug === "scratchpost")).toMatchObject({ adapter: "scratch", follow: "scheduled" });
    // Without it, the derived catalogue is the one served today.
    expect(catalogueOf(CARRIERS)).toEqual([...COURIERS]);
  });

  test("its variables are courier variables, and COURIER_RATE_LIMITS and SANDBOX_DEGRADE may name it", () => {
    const couriers = {
      prefixes: [...COURIER_VARIABLES.prefixes, scratch.adapter.envPrefix],
      backends: registry.map((c) => c.id),
    };
    const env = { SCRATCH_API_KEY: "k", COURIER_RATE_LIMITS: "scratch:1:0", SANDBOX_DEGRADE: "scratch:10:0" };
    const config = parseConfig(env, couriers);
    expect(config.courierEnv).toEqual({ SCRATCH_API_KEY: "k" });
    expect(config.courierMode).toBe("live");
    // The registry as it is knows no such courier: the same environment is refused.
    expect(COURIER_VAR.test("SCRATCH_API_KEY")).toBe(false);
    expect(() => loadConfig(env)).toThrow(/COURIER_RATE_LIMITS.*scratch is not a courier backend/);
  });

  test("its reasons and its budget come from its declaration", () => {
    const cp = scratch.reasons.rows[0]?.example;
    expect(reasonOf(scratch.reasons, present(cp))).toEqual({ reason: "customer_unavailable", mapped: true });
    expect(scratch.rateLimit).toEqual({ perSecond: 3, perDay: 0 });
  });

  const sim = startSimulator({
    clock: systemClock,
    stepSeconds: 3600,
    asyncSeconds: 1,
    twins: registry.map((c) => c.twin),
  });
  afterAll(() => sim.stop());

  test("in sandbox mode its twin answers its adapter through the simulator", async () => {
    const config = loadConfig({ COURIER_MODE: "sandbox", COURIER_TIMEOUT_MS: "5000" });
    const backends = createCourierBackends({
      config,
      clock: systemClock,
      log: silentLogger,
      simulator: sim,
      // The registry types its ids; this registry has one more than the compiled one.
      adapters: { ...ADAPTERS, scratch: scratch.adapter } as typeof ADAPTERS,
    });
    try {
      const courier = present(catalogueOf(registry).find((c) => c.slug === "scratchpost")) as unknown as Courier;
      expect(backends.availability(courier)).toBe("sandbox");
      const { snapshot } = await backends.lookup(courier, "SCR12345671");
      expect(snapshot.checkpoints[0]).toMatchObject({ state: "in_transit", rawCode: "SCR-1" });
      expect(sim.calls("scratch", "SCR12345671")).toBe(1);
      await expect(backends.lookup(courier, "SCR12345674")).rejects.toMatchObject({ kind: "not_found" });
    } finally {
      await backends.close();
    }
  });

  test("a folder whose adapter or twin answers to another id is refused at load", () => {
    expect(() => defineCourier({ ...scratch, id: "scratch2" })).toThrow(/must be scratch2/);
  });
});
