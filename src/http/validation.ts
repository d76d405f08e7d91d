/**
 * Maps TypeBox validation errors (as Elysia reports them) to the 422 body of
 * the spec, `{ detail: [{ loc, msg, type }] }`, with pydantic-v2 type names
 * (CONTRACT 1). One item per field: TypeBox reports a missing property twice
 * ("required" then "expected string"); the first, most specific, one wins.
 */
import { ValueErrorType } from "@sinclair/typebox/errors";
import type { ValidationItem } from "../errors.ts";

/** Elysia's name for where the value was → the spec's `loc[0]`. */
const LOCATION: Record<string, string> = { query: "query", params: "path", body: "body", headers: "header", header: "header", cookie: "cookie" };

interface RawError {
  path: string;
  type: number;
  message: string;
  value?: unknown;
  schema?: { type?: string; format?: string; anyOf?: { const?: unknown; type?: string; format?: string }[]; const?: unknown; minLength?: number; maxLength?: number; minimum?: number; maximum?: number; minItems?: number; maxItems?: number; pattern?: string };
}

function locOf(where: string, path: string): (string | number)[] {
  const segs = path
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  return [LOCATION[where] ?? where, ...segs];
}

function describe(e: RawError): { type: string; msg: string } {
  const s = e.schema ?? {};
  if (e.type === ValueErrorType.ObjectRequiredProperty || e.value === undefined) return { type: "missing", msg: "Field required" };
  switch (e.type) {
    case ValueErrorType.String:
      return { type: "string_type", msg: "Input should be a valid string" };
    case ValueErrorType.StringMinLength:
      return { type: "string_too_short", msg: `String should have at least ${s.minLength ?? 1} character${s.minLength === 1 ? "" : "s"}` };
    case ValueErrorType.StringMaxLength:
      return { type: "string_too_long", msg: `String should have at most ${s.maxLength} characters` };
    case ValueErrorType.StringPattern:
      return { type: "string_pattern_mismatch", msg: `String should match pattern '${s.pattern}'` };
    case ValueErrorType.StringFormat:
      return s.format === "uri" || s.format === "url"
        ? { type: "url_parsing", msg: "Input should be a valid URL" }
        : { type: "string_pattern_mismatch", msg: `String should be a valid ${s.format}` };
    case ValueErrorType.Literal:
      return { type: "literal_error", msg: `Input should be ${JSON.stringify(s.const)}` };
    case ValueErrorType.Union: {
      const options = s.anyOf ?? [];
      if (options.length > 0 && options.every((o) => o.const !== undefined))
        return { type: "enum", msg: `Input should be ${options.map((o) => `'${String(o.const)}'`).join(", ").replace(/, ([^,]*)$/, " or $1")}` };
      if (options.some((o) => o.format === "numeric" || o.type === "number" || o.type === "integer"))
        return { type: "int_parsing", msg: "Input should be a valid integer, unable to parse string as an integer" };
      return { type: "value_error", msg: "Input does not match any allowed form" };
    }
    case ValueErrorType.Array:
      return { type: "list_type", msg: "Input should be a valid list" };
    case ValueErrorType.ArrayMinItems:
      return { type: "too_short", msg: `List should have at least ${s.minItems ?? 1} item${s.minItems === 1 ? "" : "s"}` };
    case ValueErrorType.ArrayMaxItems:
      return { type: "too_long", msg: `List should have at most ${s.maxItems} items` };
    case ValueErrorType.ArrayUniqueItems:
      return { type: "value_error", msg: "List items should be unique" };
    case ValueErrorType.Boolean:
      return { type: "bool_type", msg: "Input should be a valid boolean" };
    case ValueErrorType.Integer:
    case ValueErrorType.Number:
      return { type: "int_parsing", msg: "Input should be a valid integer" };
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum:
      return { type: "greater_than_equal", msg: `Input should be greater than or equal to ${s.minimum}` };
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum:
      return { type: "less_than_equal", msg: `Input should be less than or equal to ${s.maximum}` };
    case ValueErrorType.Object:
      return { type: "model_type", msg: "Input should be a valid object" };
    case ValueErrorType.ObjectAdditionalProperties:
      return { type: "extra_forbidden", msg: "Extra inputs are not permitted" };
    default:
      return { type: "value_error", msg: e.message };
  }
}

/** Turns Elysia's `ValidationError.all` for location `where` into 422 items. */
export function toValidationItems(where: string, errors: readonly RawError[]): ValidationItem[] {
  const seen = new Set<string>();
  const items: ValidationItem[] = [];
  for (const e of errors) {
    if (seen.has(e.path)) continue;
    seen.add(e.path);
    const { type, msg } = describe(e);
    items.push({ loc: locOf(where, e.path), msg, type });
  }
  return items;
}
