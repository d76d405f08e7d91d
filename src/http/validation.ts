/**
 * Maps TypeBox validation errors (as Elysia reports them, or as our own body
 * check finds them) to the 422 body of the spec, `{ detail: [{ loc, msg, type }] }`,
 * with pydantic-v2 type names. One item per field: TypeBox reports a missing
 * property twice ("required" then "expected string"); the first, most
 * specific, one wins. No item ever carries the received value.
 *
 * Request bodies are checked by {@link addBodyCheck}, before Elysia's own
 * validation: Elysia's `ValidationError` serialises the whole received value
 * into its message when it is constructed (pretty-printed, with a generated
 * example value, unless NODE_ENV=production), a cost the client controls.
 * Ours walks the value once, stops after {@link MAX_VALIDATION_ITEMS}
 * problems and never serialises it, whatever NODE_ENV says; a body that
 * passes it passes Elysia's check too.
 */
import { OptionalKind, type TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { ValueErrorType } from "@sinclair/typebox/errors";
import { RequestValidationError, type ValidationItem } from "../errors.ts";
import { modelSchema } from "./models.ts";

/** Most 422 items reported for one request (Elysia's own cap is the same). */
export const MAX_VALIDATION_ITEMS = 64;

/**
 * Free text (descriptions): anything but U+0000, which PostgreSQL `text`
 * cannot store. JSON bodies are UTF-8 by the time they are validated.
 */
export const FREE_TEXT_PATTERN = "^[^\\u0000]*$";

/**
 * Tokens carried in a URL (ids, cursors, slugs, tracking numbers): no control
 * characters; no `%`, which is only left in a decoded query value when its
 * percent-encoding was not UTF-8 (Elysia keeps such a value undecoded); no
 * U+FFFD, which is what an invalid UTF-8 sequence in the path decodes to.
 */
export const URL_TOKEN_PATTERN = "^[^\\u0000-\\u001F\\u007F%\\uFFFD]*$";

/** Elysia's name for where the value was → the spec's `loc[0]`. */
const LOCATION: Record<string, string> = { query: "query", params: "path", body: "body", headers: "header", header: "header", cookie: "cookie" };

interface RawError {
  path: string;
  type: number;
  message: string;
  value?: unknown;
  /** Union errors: one iterator per variant, in `anyOf` order. */
  errors?: { First(): RawError | undefined }[];
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

const UNDECODABLE = { type: "string_unicode", msg: "Input should be a valid string, unable to parse raw data as a unicode string" };

/**
 * A nullable field (`X | null`) given something other than null: the problem
 * is `X`'s (too long, wrong type, pattern), not "no variant matched".
 */
function unwrapNullable(e: RawError): RawError {
  const options = e.schema?.anyOf;
  if (e.type !== ValueErrorType.Union || e.value === null || options?.length !== 2) return e;
  const nullAt = options.findIndex((o) => o.type === "null");
  if (nullAt === -1) return e;
  const inner = e.errors?.[1 - nullAt]?.First();
  return inner ? unwrapNullable(inner) : e;
}

/** Turns Elysia's `ValidationError.all` (or TypeBox errors) for location `where` into 422 items. */
export function toValidationItems(where: string, errors: readonly RawError[]): ValidationItem[] {
  const seen = new Set<string>();
  const items: ValidationItem[] = [];
  for (const e of errors) {
    if (seen.has(e.path)) continue;
    seen.add(e.path);
    // Elysia hands a path segment whose percent-encoding is not UTF-8 over as null.
    const { type, msg } = where === "params" && e.value === null ? UNDECODABLE : describe(unwrapNullable(e));
    items.push({ loc: locOf(where, e.path), msg, type });
  }
  return items;
}

/** Items a route's own rules found in the body (e.g. the webhook URL rules), reported with the schema's. */
const ruleItems = new WeakMap<Request, ValidationItem[]>();

/**
 * Adds 422 items for `request`'s body from a route's own rules (a `transform`
 * hook that runs before the schema check), so one answer lists every problem:
 * the schema's and the rules' together (pydantic reports all fields at once).
 */
export function reportBodyItems(request: Request, items: readonly ValidationItem[]): void {
  if (items.length > 0) ruleItems.set(request, [...(ruleItems.get(request) ?? []), ...items]);
}

interface RouteOptions {
  body?: unknown;
  transform?: unknown;
}

/**
 * Adds to a route (its options, as a macro's `introspect` sees them) a
 * `transform` hook that checks the parsed JSON body against the route's
 * `body` schema (or the model it names, registered with `schemaModels`) before Elysia validates it; see the
 * module comment. The schema is compiled once, here. Routes without a body schema are left alone.
 * @throws Error at once when the route names a body model that `schemaModels` did not register
 * @throws RequestValidationError (422) from the hook when the body does not match
 */
export function addBodyCheck(route: RouteOptions): void {
  const schema = (typeof route.body === "string" ? modelSchema(route.body) : route.body) as TSchema | undefined;
  if (typeof route.body === "string" && !schema) throw new Error(`body model ${route.body} is not registered with schemaModels (src/http/models.ts)`);
  if (!schema || typeof schema !== "object") return;
  const compiled = TypeCompiler.Compile(schema);
  const optional = (schema as unknown as Record<PropertyKey, unknown>)[OptionalKind] === "Optional";
  const check = (c: { body: unknown; request: Request }) => {
    const extra = ruleItems.get(c.request) ?? [];
    if (optional && c.body === undefined && extra.length === 0) return;
    if (compiled.Check(c.body) && extra.length === 0) return;
    const errors: RawError[] = [];
    if (!(optional && c.body === undefined))
      for (const e of compiled.Errors(c.body)) if (errors.push(e as RawError) >= MAX_VALIDATION_ITEMS) break;
    const items = toValidationItems("body", errors);
    const seen = new Set(items.map((i) => i.loc.join("\u0000")));
    throw new RequestValidationError([...items, ...extra.filter((i) => !seen.has(i.loc.join("\u0000")))]);
  };
  const existing = route.transform;
  route.transform = existing === undefined ? [check] : Array.isArray(existing) ? [...existing, check] : [existing, check];
}
