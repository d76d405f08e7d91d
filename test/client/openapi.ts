/**
 * Validation against the served OpenAPI document with Ajv (JSON Schema
 * 2020-12, the dialect of OpenAPI 3.1): the document is registered whole, so
 * `$ref`s resolve exactly as a client's tooling would resolve them.
 */
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

type Json = Record<string, any>;

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

export interface DocValidator {
  doc: Json;
  /** Errors of `value` against the schema at `#/<path…>` (empty when valid). */
  errors(value: unknown, ...path: string[]): string[];
  /** The operation for a concrete request path (`/v1/webhooks/wh_1`) and method, with its template. */
  operation(method: string, path: string): { template: string; op: Json } | undefined;
}

/** Compiles validators over `doc` (strict mode off: OpenAPI adds keywords such as `example`). */
export function docValidator(doc: Json): DocValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, "doc");
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  return {
    doc,
    errors(value, ...path) {
      const ref = `doc#/${pointer(...path)}`;
      let v = compiled.get(ref);
      if (!v) {
        v = ajv.compile({ $ref: ref });
        compiled.set(ref, v);
      }
      return v(value)
        ? []
        : (v.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);
    },
    operation(method, path) {
      // Literal paths first: `/v1/couriers/detect` is not the slug `detect`.
      const entries = Object.entries(doc.paths as Json).sort(
        ([a], [b]) => Number(a.includes("{")) - Number(b.includes("{")),
      );
      for (const [template, ops] of entries) {
        const re = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
        const op = (ops as Json)[method.toLowerCase()];
        if (op && re.test(path)) return { template, op };
      }
      return undefined;
    },
  };
}
