/** Error responses in the document: the `Error` envelope narrowed to the codes a route declares, one example per code. */
import { CODE_STATUS, ErrorSchema, type ErrorCode } from "../lib/errors.ts";
import type { Json } from "./json.ts";

/** The literal values of a `code` schema as TypeBox or the document spells it: `const`, `enum`, or `anyOf` of those. */
function literals(schema: Json | undefined): string[] {
  if (!schema) return [];
  if (typeof schema.const === "string") return [schema.const];
  if (Array.isArray(schema.enum)) return schema.enum.filter((v: unknown): v is string => typeof v === "string");
  if (Array.isArray(schema.anyOf)) return schema.anyOf.flatMap(literals);
  return [];
}

/** The error codes an error response schema declares (its `error.code` union, or {@link errorSchema}'s narrowing), in declared order. */
export function codesIn(schema: Json | undefined): ErrorCode[] {
  if (!schema) return [];
  const narrowing = Array.isArray(schema.allOf) ? schema.allOf[1] : schema;
  return literals(narrowing?.properties?.error?.properties?.code).filter((c): c is ErrorCode => c in CODE_STATUS);
}

/**
 * The `Error` component narrowed to `codes`; other fields are `true` because Redocly reads every unlisted
 * property as forbidden, branch by branch of an `allOf`.
 */
export function errorSchema(codes: readonly ErrorCode[]): Json {
  const others = Object.keys(ErrorSchema.properties.error.properties).filter((k) => k !== "code");
  const error = {
    type: "object",
    required: ["code"],
    properties: { code: { type: "string", enum: [...codes] }, ...Object.fromEntries(others.map((k) => [k, true])) },
  };
  return {
    allOf: [{ $ref: "#/components/schemas/Error" }, { type: "object", required: ["error"], properties: { error } }],
  };
}

/** One example body per code, named by the code; `messages` holds the documented wording of each. */
export function errorExamples(codes: readonly ErrorCode[], messages: Record<ErrorCode, string>): Json {
  const examples: Json = {};
  for (const code of codes) {
    const error: Json = { code, message: messages[code] };
    if (code === "COURIER_NOT_FOUND") error.did_you_mean = "delhivery";
    if (code === "COURIER_AMBIGUOUS") error.candidates = ["bluedart", "dtdc", "ecomexpress"];
    examples[code] = { summary: code, value: { success: false, error } };
  }
  return examples;
}

/** The `Error` component: the envelope with `code` as a plain enum of every code (TypeBox writes `anyOf` of consts). */
export function errorComponent(): Json {
  const out = JSON.parse(JSON.stringify(ErrorSchema)) as Json;
  const code = out.properties.error.properties.code;
  out.properties.error.properties.code = { type: "string", enum: literals(code), description: code.description };
  out.description =
    "The error envelope. `code` is one of the documented codes; each response narrows it to the codes it can carry.";
  return out;
}
