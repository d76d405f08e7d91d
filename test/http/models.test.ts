/**
 * Request and success bodies registered once as models (src/http/models.ts; docs/architecture.md, "Schemas"):
 * a name holds one schema, the `/v1` body check finds a named body's schema (and refuses a name nobody
 * registered), and the OpenAPI document refuses a success body written inline in a route.
 */
import { describe, expect, test } from "bun:test";
import { Type as T } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import { RequestValidationError } from "../../src/lib/errors.ts";
import { modelSchema, schemaModels } from "../../src/http/models.ts";
import { addRequestChecks } from "../../src/http/validation.ts";
import { openApiDocument } from "../../src/openapi/document.ts";

// Names no module uses: the registry is the process's.
const ProbeBody = t.Object({ name: t.String({ minLength: 1 }) }, { additionalProperties: false });

describe("schemaModels", () => {
  test("registers each schema under its name; the same schema again is fine, another one under a taken name throws", () => {
    schemaModels("probe.models", { ProbeBody });
    expect(modelSchema("ProbeBody")).toBe(ProbeBody);
    expect(() => schemaModels("probe.models.again", { ProbeBody })).not.toThrow();
    expect(() => schemaModels("probe.models.other", { ProbeBody: t.Object({ name: t.Number() }) })).toThrow(
      /ProbeBody is registered twice/,
    );
    expect(modelSchema("ProbeBody")).toBe(ProbeBody);
    expect(modelSchema("NoSuchProbeModel")).toBeUndefined();
  });
});

describe("the body check of a named body", () => {
  test("checks the body against the registered schema: every problem, undeclared fields included", () => {
    schemaModels("probe.models", { ProbeBody });
    const route: { body: unknown; transform?: unknown } = { body: "ProbeBody" };
    addRequestChecks(route);
    const [check] = route.transform as ((c: { body: unknown; request: Request }) => void)[];
    const request = new Request("https://localhost/v1/probe", { method: "POST" });
    expect(() => check!({ body: { name: "ok" }, request })).not.toThrow();
    let thrown: unknown;
    try {
      check!({ body: { name: "", extra: 1 }, request });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(RequestValidationError);
    expect((thrown as RequestValidationError).items.map((i) => i.loc.join(".")).sort()).toEqual([
      "body.extra",
      "body.name",
    ]);
  });

  test("a body model nobody registered is refused when the route is defined", () => {
    expect(() => addRequestChecks({ body: "NoSuchProbeModel" })).toThrow(/NoSuchProbeModel is not registered/);
  });
});

describe("the OpenAPI document", () => {
  const opts = { publicBaseUrl: "https://localhost:8443" };
  const detail = { operationId: "probe", summary: "Probe", description: "Probe.", tags: ["Tracking"] };

  test("a success body named as a model is a $ref to the model's component", () => {
    const Probe = T.Object({ success: T.Literal(true) }, { title: "ProbeResponse" });
    const app = new Elysia()
      .use(schemaModels("probe.response.models", { ProbeResponse: Probe }))
      .get("/probe", () => ({ success: true as const }), { response: { 200: "ProbeResponse" }, detail });
    const doc = openApiDocument(app, opts);
    expect(doc.paths["/probe"].get.responses["200"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/ProbeResponse",
    });
    expect(doc.components.schemas.ProbeResponse).toMatchObject({
      title: "ProbeResponse",
      type: "object",
      required: ["success"],
    });
    expect(doc.components.schemas.ProbeResponse.$id).toBeUndefined();
  });

  test("a success body written inline in the route is refused", () => {
    const app = new Elysia().get("/probe", () => ({ success: true as const }), {
      response: { 200: T.Object({ success: T.Literal(true) }) },
      detail,
    });
    expect(() => openApiDocument(app, opts)).toThrow(/probe 200: not a model/);
  });
});
