/** The spec's 422 body from TypeBox errors, and the `/v1` request checks (docs/hostile-input.md#limits). */
import { OptionalKind, type TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { ValueErrorType } from "@sinclair/typebox/errors";
import { RequestValidationError, type ValidationItem } from "../lib/errors.ts";
import { modelSchema } from "./models.ts";
import { IDEMPOTENCY_HEADER, idempotencyKeyProblem } from "./idempotency.ts";
import { httpScope } from "./scope.ts";
import { isText, textProblem } from "./text.ts";

/** Most 422 items reported for one request (Elysia's own cap is the same). */
const MAX_VALIDATION_ITEMS = 64;

/** Free text: anything but U+0000, which PostgreSQL `text` cannot store. */
export const FREE_TEXT_PATTERN = "^[^\\u0000]*$";

/** URL tokens: no control characters, `%` (non-UTF-8 encoding) or U+FFFD (invalid UTF-8). */
export const URL_TOKEN_PATTERN = "^[^\\u0000-\\u001F\\u007F%\\uFFFD]*$";

const LOCATION: Record<string, string> = {
  query: "query",
  params: "path",
  body: "body",
  headers: "header",
  header: "header",
  cookie: "cookie",
};

interface RawError {
  path: string;
  type: number;
  message: string;
  value?: unknown;
  errors?: { First(): RawError | undefined }[];
  schema?: {
    type?: string;
    format?: string;
    anyOf?: { const?: unknown; type?: string; format?: string }[];
    const?: unknown;
    minLength?: number;
    maxLength?: number;
    minimum?: number;
    maximum?: number;
    minItems?: number;
    maxItems?: number;
    pattern?: string;
  };
}

function locOf(where: string, path: string): (string | number)[] {
  const segs = (path.startsWith("/") ? path : "")
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  return [LOCATION[where] ?? where, ...segs];
}

/** The TypeBox error type that `Text`'s problem stands for: a Text field reads exactly like a String field. */
const TEXT_ERROR = {
  type: ValueErrorType.String,
  minLength: ValueErrorType.StringMinLength,
  maxLength: ValueErrorType.StringMaxLength,
  pattern: ValueErrorType.StringPattern,
  format: ValueErrorType.StringFormat,
} as const;

function describe(e: RawError): { type: string; msg: string } {
  const s = e.schema ?? {};
  if (e.type === ValueErrorType.ObjectRequiredProperty || e.value === undefined)
    return { type: "missing", msg: "Field required" };
  if (e.type === ValueErrorType.Kind && isText(e.schema)) {
    const problem = textProblem(e.schema, e.value);
    if (problem) return describe({ ...e, type: TEXT_ERROR[problem] });
  }
  switch (e.type) {
    case ValueErrorType.String:
      return { type: "string_type", msg: "Input should be a valid string" };
    case ValueErrorType.StringMinLength:
      return {
        type: "string_too_short",
        msg: `String should have at least ${s.minLength ?? 1} character${s.minLength === 1 ? "" : "s"}`,
      };
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
        return {
          type: "enum",
          msg: `Input should be ${options
            .map((o) => `'${String(o.const)}'`)
            .join(", ")
            .replace(/, ([^,]*)$/, " or $1")}`,
        };
      if (options.some((o) => o.format === "numeric" || o.type === "number" || o.type === "integer"))
        return { type: "int_parsing", msg: "Input should be a valid integer, unable to parse string as an integer" };
      return { type: "value_error", msg: "Input does not match any allowed form" };
    }
    case ValueErrorType.Array:
      return { type: "list_type", msg: "Input should be a valid list" };
    case ValueErrorType.ArrayMinItems:
      return {
        type: "too_short",
        msg: `List should have at least ${s.minItems ?? 1} item${s.minItems === 1 ? "" : "s"}`,
      };
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

const UNDECODABLE = {
  type: "string_unicode",
  msg: "Input should be a valid string, unable to parse raw data as a unicode string",
};

/** A nullable field given something else: the problem is the inner type's, not "no variant matched". */
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
    const inner = unwrapNullable(e);
    const { type, msg } = where === "params" && e.value === null ? UNDECODABLE : describe(inner);
    items.push({ loc: locOf(where, inner.path), msg, type });
  }
  return items;
}

/**
 * Notes items the path or query check found in the request's scope, for the route's last check to report with the
 * others; outside a scope (a bare Elysia app) they are reported at once.
 * @throws RequestValidationError (422) outside a request scope
 */
function note(items: ValidationItem[]): void {
  const scope = httpScope();
  if (!scope) throw new RequestValidationError(items.slice(0, MAX_VALIDATION_ITEMS));
  if (scope.found) scope.found.push(...items);
  else scope.found = items;
}

/**
 * Adds a route's own rule items for the running request's body (`_request`, kept in its scope); they replace the
 * schema's at the same `loc`.
 * @throws RequestValidationError (422) at once outside a request scope (a bare Elysia app)
 */
export function reportBodyItems(_request: Request, items: readonly ValidationItem[]): void {
  if (items.length === 0) return;
  const scope = httpScope();
  if (!scope) throw new RequestValidationError(items.slice(0, MAX_VALIDATION_ITEMS));
  if (scope.ruled) scope.ruled.push(...items);
  else scope.ruled = [...items];
}

interface RouteOptions {
  body?: unknown;
  query?: unknown;
  params?: unknown;
  transform?: unknown;
}

type Compiled = ReturnType<typeof TypeCompiler.Compile>;

interface ParameterCheck {
  compiled: Compiled;
  numeric: [name: string, integer: boolean][];
}

const INTEGER_TEXT = /^-?[0-9]+$/;
const NUMBER_TEXT = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

function parameterCheck(schema: unknown): ParameterCheck | undefined {
  if (!schema || typeof schema !== "object") return undefined;
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const numeric = Object.entries(properties)
    .filter(([, p]) => p.type === "integer" || p.type === "number")
    .map(([name, p]): [string, boolean] => [name, p.type === "integer"]);
  return { compiled: TypeCompiler.Compile(schema as TSchema), numeric };
}

/** Converts `values`' numeric parameters in place (see the module comment); text that is not a number stays text. */
function convertNumbers(values: Record<string, unknown>, numeric: ParameterCheck["numeric"]): void {
  for (const [name, integer] of numeric) {
    const v = values[name];
    if (typeof v === "string" && (integer ? INTEGER_TEXT : NUMBER_TEXT).test(v)) values[name] = Number(v);
  }
}

function errorsOf(compiled: Compiled, value: unknown, room: number): RawError[] {
  const errors: RawError[] = [];
  if (room <= 0) return errors;
  for (const e of compiled.Errors(value)) if (errors.push(e as RawError) >= room) break;
  return errors;
}

/**
 * Adds to a route a `transform` hook that checks path, query, `Idempotency-Key` and the JSON body against the
 * route's schemas (compiled once, here) before Elysia validates them.
 * @throws Error at once when the route names a body model that `schemaModels` did not register
 * @throws RequestValidationError (422) from the hook, with every problem found
 */
export function addRequestChecks(route: RouteOptions): void {
  const bodySchema = (typeof route.body === "string" ? modelSchema(route.body) : route.body) as TSchema | undefined;
  if (typeof route.body === "string" && !bodySchema)
    throw new Error(`body model ${route.body} is not registered with schemaModels (src/http/models.ts)`);
  const body = bodySchema && typeof bodySchema === "object" ? TypeCompiler.Compile(bodySchema) : undefined;
  const optional = !!bodySchema && (bodySchema as unknown as Record<PropertyKey, unknown>)[OptionalKind] === "Optional";
  const params = parameterCheck(route.params);
  const query = parameterCheck(route.query);
  // One hook per declared part, naming only the fields it reads: Elysia parses what a hook mentions.
  const hooks: ((c: never) => void)[] = [];
  if (params)
    hooks.push(({ params: values }: { params: Record<string, unknown> }) => {
      if (!params.compiled.Check(values))
        note(toValidationItems("params", errorsOf(params.compiled, values, MAX_VALIDATION_ITEMS)));
    });
  if (query)
    hooks.push(({ query: values }: { query: Record<string, unknown> }) => {
      convertNumbers(values, query.numeric);
      if (!query.compiled.Check(values))
        note(toValidationItems("query", errorsOf(query.compiled, values, MAX_VALIDATION_ITEMS)));
    });
  // The last hook reports everything found; a POST without any part has its key checked in idempotency.ts.
  const report = (request: Request, bodyItems?: (room: number, ruled: Set<string>) => ValidationItem[]) => {
    const scope = httpScope();
    const items = scope?.found ?? [];
    const key = request.method === "POST" ? request.headers.get(IDEMPOTENCY_HEADER) : null;
    const keyProblem = key === null ? undefined : idempotencyKeyProblem(key);
    if (keyProblem) items.push(keyProblem);
    const extra = scope?.ruled ?? [];
    if (bodyItems)
      items.push(...bodyItems(MAX_VALIDATION_ITEMS - items.length, new Set(extra.map((i) => i.loc.join("\u0000")))));
    items.push(...extra);
    if (items.length > 0) throw new RequestValidationError(items.slice(0, MAX_VALIDATION_ITEMS));
  };
  if (body)
    hooks.push(({ body: value, request }: { body: unknown; request: Request }) => {
      const bodyItems = (room: number, ruled: Set<string>) =>
        (optional && value === undefined) || body.Check(value)
          ? []
          : toValidationItems("body", errorsOf(body, value, room)).filter((i) => !ruled.has(i.loc.join("\u0000")));
      report(request, bodyItems);
    });
  else if (hooks.length > 0) hooks.push(({ request }: { request: Request }) => report(request));
  else return;
  const existing = route.transform;
  route.transform = [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), ...hooks];
}
