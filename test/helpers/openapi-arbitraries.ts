/**
 * fast-check arbitraries read from the served OpenAPI document: for each operation, requests whose every
 * parameter and body come from the operation's own schemas — all valid, or with exactly one value made invalid
 * (a wrong type, out of range, too long or too short in characters, off its pattern or format, a missing or an
 * undeclared body field) — sent with a valid key, a bad key or none. Every generated value is checked against
 * the document with Ajv (test/client/openapi.ts), so "valid" and "invalid" mean what the document says, not
 * what this generator believes. Used by test/http/openapi-properties.test.ts.
 */
import fc from "fast-check";
import type { DocValidator } from "../client/openapi.ts";

type Json = Record<string, any>;

/** Where a value goes, as the 422 `loc` names it. */
export type Where = "path" | "query" | "header" | "body";

export interface GeneratedRequest {
  method: string;
  /** The path with its parameters filled in and percent-encoded, and the query string. */
  url: string;
  headers: Record<string, string>;
  /** JSON text, or undefined for no body. */
  body?: string;
  key: "valid" | "bad" | "none";
  /** The one value made invalid, or undefined when every value is valid. */
  invalid?: { where: Where; name: string };
}

/** Values the caller knows exist (a webhook id, a followed shipment), so that some requests reach a 2xx. */
export type Known = Record<string, string[]>;

export interface OperationEntry {
  template: string;
  method: string;
  op: Json;
}

/** Every operation of the document. */
export function operationsOf(doc: Json): OperationEntry[] {
  return Object.entries(doc.paths as Json).flatMap(([template, ops]) =>
    Object.entries(ops as Json)
      .filter(([m]) => ["get", "put", "post", "delete", "patch"].includes(m))
      .map(([method, op]) => ({ template, method: method.toUpperCase(), op: op as Json })),
  );
}

function resolve(doc: Json, schema: Json): Json {
  let s = schema;
  for (let i = 0; s?.$ref && i < 10; i++)
    s = s.$ref
      .split("/")
      .slice(1)
      .reduce((n: Json, k: string) => n[k.replaceAll("~1", "/").replaceAll("~0", "~")], doc);
  return s ?? {};
}

/** Code points, as JSON Schema counts string length. */
const chars = (s: string) => [...s].length;

const NOW = Date.parse("2026-11-05T10:00:00Z");
const DAY = 86_400_000;

/** Any value of `schema` (not yet checked against the document: the caller filters with Ajv). */
function anyValid(doc: Json, raw: Json, known: Known = {}): fc.Arbitrary<unknown> {
  const schema = resolve(doc, raw);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if ("const" in schema) return fc.constant(schema.const);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((s: Json) => anyValid(doc, s, known)));
  if (Array.isArray(schema.type))
    return fc.oneof(...schema.type.map((type: string) => anyValid(doc, { ...schema, type }, known)));
  switch (schema.type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000 });
    case "number":
      return fc.double({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000, noNaN: true });
    case "array": {
      const min = schema.minItems ?? 0;
      return fc.array(anyValid(doc, schema.items ?? {}, known), {
        minLength: min,
        maxLength: Math.min(schema.maxItems ?? min + 3, min + 3),
      });
    }
    case "object": {
      const props = Object.entries((schema.properties ?? {}) as Json);
      const required = new Set<string>(schema.required ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, s] of props)
        record[k] = known[k]?.length
          ? fc.oneof(fc.constantFrom(...known[k]!), anyValid(doc, s, known))
          : anyValid(doc, s, known);
      const declared = fc.record(record, { requiredKeys: [...required] });
      // A map (`patternProperties`): up to 3 keys its name pattern admits (HTTP tokens, metadata keys), each with a value.
      const maps = Object.entries((schema.patternProperties ?? {}) as Json);
      if (maps.length === 0) return declared;
      const [pattern, valueSchema] = maps[0]!;
      const entries = fc.dictionary(
        fc.stringMatching(new RegExp(pattern, "u"), { maxLength: 12 }),
        anyValid(doc, valueSchema, known),
        { maxKeys: Math.min(schema.maxProperties ?? 3, 3) },
      );
      return fc.tuple(declared, entries).map(([d, e]) => ({ ...e, ...d }));
    }
    default:
      return validString(schema);
  }
}

function validString(schema: Json): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? 40, min + 40);
  if (schema.format === "date-time")
    return fc.oneof(
      {
        weight: 9,
        arbitrary: fc.integer({ min: NOW - 60 * DAY, max: NOW + DAY }).map((ms) => new Date(ms).toISOString()),
      },
      // A leap second (RFC 3339 section 5.6): 23:59:60 UTC of a day in the same range.
      {
        weight: 1,
        arbitrary: fc
          .integer({ min: NOW - 60 * DAY, max: NOW })
          .map((ms) => `${new Date(ms).toISOString().slice(0, 10)}T23:59:60Z`),
      },
    );
  const ok = (s: string) => chars(s) >= min && chars(s) <= (schema.maxLength ?? Infinity);
  if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern, "u"), { maxLength: 2 * max + 8 }).filter(ok);
  return fc.string({
    unit: fc.oneof(
      { weight: 6, arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }) },
      { weight: 1, arbitrary: fc.string({ unit: "grapheme-composite", minLength: 1, maxLength: 1 }) },
    ),
    minLength: min,
    maxLength: max,
  });
}

/** A value `schema` refuses (the caller filters with Ajv). `text`: the value travels as text (path, query, header). */
function anyInvalid(doc: Json, raw: Json, text: boolean, known: Known = {}): fc.Arbitrary<unknown> {
  const resolved = resolve(doc, raw);
  // `type: ["object", "null"]`: the mutations of the one type that is not null.
  const schema = Array.isArray(resolved.type)
    ? { ...resolved, type: resolved.type.find((t: string) => t !== "null") }
    : resolved;
  const options: fc.Arbitrary<unknown>[] = [];
  if (schema.enum) options.push(fc.constantFrom("nope", "TEST", `${schema.enum[0]} `, ""));
  if (schema.type === "integer" || schema.type === "number") {
    options.push(fc.constantFrom("2.5", "1e1", "0x10", " 5", "abc", "", "-", "1.0", "Infinity"));
    if (schema.minimum !== undefined) options.push(fc.integer({ min: schema.minimum - 1000, max: schema.minimum - 1 }));
    if (schema.maximum !== undefined)
      options.push(fc.integer({ min: schema.maximum + 1, max: schema.maximum + 10 ** 12 }));
  }
  if (schema.type === "string" && !schema.enum) {
    if (schema.maxLength !== undefined)
      options.push(
        fc
          .tuple(fc.constantFrom("a", "📦", "ü", "9"), fc.integer({ min: 1, max: 5 }))
          .map(([c, extra]) => c.repeat(schema.maxLength + extra)),
      );
    if ((schema.minLength ?? 0) > 0 && !text) options.push(fc.constant(""));
    if (schema.pattern)
      options.push(
        fc
          .tuple(
            validString({ ...schema, pattern: undefined, maxLength: Math.min(schema.maxLength ?? 20, 20) }),
            fc.constantFrom("\u0000", "\u0001", "%", "\u007f", "\ufffd", " ", "@", "#", "http://x.invalid/"),
          )
          .map(([s, bad]) => `${bad}${s}`),
      );
    if (schema.format === "date-time")
      options.push(
        fc.constantFrom("yesterday", "2026-13-45T00:00:00Z", "2026-11-05", "2026-11-05T25:00:00Z", "0", "9".repeat(30)),
      );
  }
  if (!text) {
    options.push(fc.constantFrom<unknown>(null, 7, -1.5, true, [], {}, "text", [1, 2]));
    if (schema.type === "array") {
      if ((schema.minItems ?? 0) > 0) options.push(fc.constant([]));
      if (schema.maxItems !== undefined)
        options.push(
          fc.array(anyValid(doc, schema.items ?? {}), {
            minLength: schema.maxItems + 1,
            maxLength: schema.maxItems + 2,
          }),
        );
      options.push(
        fc
          .tuple(anyValid(doc, schema, known), anyInvalid(doc, schema.items ?? {}, false, known))
          .map(([a, bad]) => [...(a as unknown[]), bad]),
      );
    }
    if (schema.type === "object") {
      const valid = anyValid(doc, schema, known) as fc.Arbitrary<Json>;
      const required: string[] = schema.required ?? [];
      if (required.length)
        options.push(
          fc
            .tuple(valid, fc.constantFrom(...required))
            .map(([o, k]) => Object.fromEntries(Object.entries(o).filter(([n]) => n !== k))),
        );
      if (schema.additionalProperties === false) options.push(valid.map((o) => ({ ...o, undeclared_field: 1 })));
      const props = Object.entries((schema.properties ?? {}) as Json);
      if (props.length)
        options.push(
          fc
            .tuple(valid, fc.integer({ min: 0, max: props.length - 1 }))
            .chain(([o, i]) =>
              anyInvalid(doc, props[i]![1], false, known).map((bad) => ({ ...o, [props[i]![0]]: bad })),
            ),
        );
    }
  }
  if (options.length === 0) options.push(fc.constant(text ? "\u0000" : null));
  return fc.oneof(...options);
}

/**
 * Whether a value arrives as sent: a path or query value must be percent-encodable (no lone surrogate) and a
 * path segment not `.` or `..` (the URL parser folds them); a header value is Latin-1 without control
 * characters or surrounding blanks (Headers refuse or trim those).
 */
function sendable(where: Where, x: unknown): boolean {
  if (where === "body" || typeof x === "number") return true;
  if (typeof x !== "string") return false;
  if (where === "header") return /^(?:[\x21-\x7e\xa0-\xff](?:[\x20-\x7e\xa0-\xff]*[\x21-\x7e\xa0-\xff])?)?$/.test(x);
  return !/\p{Surrogate}/u.test(x) && (where !== "path" || (x !== "." && x !== ".." && x !== ""));
}

/** A value for the schema at `path` in the document: valid, or invalid, as Ajv judges it against the document. */
function value(
  v: DocValidator,
  path: string[],
  valid: boolean,
  where: Where,
  known: Known,
  name: string,
  confine = (x: unknown) => x,
): fc.Arbitrary<unknown> {
  const schema = path.reduce((n: Json, k) => n[k], v.doc);
  const judged = (x: unknown) => (v.errors(x, ...path).length === 0) === valid;
  const text = where !== "body";
  const generated = (valid ? anyValid(v.doc, schema, known) : anyInvalid(v.doc, schema, text, known))
    .map(confine)
    .filter((x) => sendable(where, x) && judged(x));
  const mine = known[name] ?? [];
  return valid && where !== "body" && mine.length ? fc.oneof(fc.constantFrom(...mine), generated) : generated;
}

interface Param {
  name: string;
  in: Where | "header";
  required?: boolean;
  schema: Json;
  index: number;
}

/**
 * Requests for one operation (`entry`, at `doc.paths[template][method]`): valid ones, and ones with exactly one
 * invalid value, in equal measure, with a valid key most of the time. `known` supplies values by parameter or
 * body field name, offered beside the generated ones. `confineBody` rewrites a generated body before it is
 * judged (the caller's network safety: see the test).
 */
export function requestsFor(
  v: DocValidator,
  entry: OperationEntry,
  known: Known,
  keys: { valid: string; bad: string },
  confineBody?: (body: unknown) => unknown,
): fc.Arbitrary<GeneratedRequest> {
  const opPath = ["paths", entry.template, entry.method.toLowerCase()];
  const params: Param[] = (entry.op.parameters ?? []).map((p: Json, index: number) => ({ ...p, index }));
  const bodyDoc = entry.op.requestBody;
  const bodyRequired = !!bodyDoc?.required;
  const targets: { where: Where; name: string; param?: Param }[] = [
    ...params.map((p) => ({ where: (p.in === "header" ? "header" : p.in) as Where, name: p.name, param: p })),
    ...(bodyDoc ? [{ where: "body" as Where, name: "body" }] : []),
  ];
  const authed = Array.isArray(entry.op.security) && entry.op.security.length > 0;
  const keyMode = authed
    ? fc.constantFrom<GeneratedRequest["key"]>("valid", "valid", "valid", "valid", "bad", "none")
    : fc.constant<GeneratedRequest["key"]>("none");
  const invalidTarget = targets.length
    ? fc.option(fc.constantFrom(...targets), { freq: 2, nil: undefined })
    : fc.constant(undefined);

  return fc.tuple(invalidTarget, keyMode).chain(([bad, key]) => {
    const parts: Record<string, fc.Arbitrary<unknown>> = {};
    for (const p of params) {
      const isBad = bad?.param === p;
      const arb = value(v, [...opPath, "parameters", String(p.index), "schema"], !isBad, p.in as Where, known, p.name);
      parts[`${p.in}:${p.name}`] =
        isBad || p.required || p.in === "path" ? arb : fc.option(arb, { nil: undefined, freq: 3 });
    }
    if (bodyDoc) {
      const bodyPath = [...opPath, "requestBody", "content", "application/json", "schema"];
      const arb = value(v, bodyPath, bad?.where !== "body", "body", known, "body", confineBody);
      parts.body = bad?.where === "body" || bodyRequired ? arb : fc.option(arb, { nil: undefined, freq: 3 });
    }
    return fc.record(parts).map((values): GeneratedRequest => {
      let url = entry.template;
      const query: string[] = [];
      const headers: Record<string, string> = {};
      for (const p of params) {
        const x = values[`${p.in}:${p.name}`];
        if (x === undefined) continue;
        const s = String(x);
        if (p.in === "path") url = url.replace(`{${p.name}}`, encodeURIComponent(s));
        else if (p.in === "query") query.push(`${encodeURIComponent(p.name)}=${encodeURIComponent(s)}`);
        else if (p.in === "header") headers[p.name] = s;
      }
      if (query.length) url += `?${query.join("&")}`;
      if (key !== "none") headers["x-api-key"] = key === "valid" ? keys.valid : keys.bad;
      const body = values.body === undefined ? undefined : JSON.stringify(values.body);
      if (body !== undefined) headers["content-type"] = "application/json";
      return {
        method: entry.method,
        url,
        headers,
        body,
        key,
        invalid: bad ? { where: bad.where, name: bad.name } : undefined,
      };
    });
  });
}
