/** `Text`: string lengths in code points, as JSON Schema counts them (docs/hostile-input.md#limits). */
import { FormatRegistry, Kind, type SchemaOptions, type TUnsafe, Type, TypeRegistry } from "@sinclair/typebox";

const TEXT_KIND = "Text";

export interface TextOptions extends SchemaOptions {
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
}

/** Which rule a value breaks: the JSON Schema keyword, or `type` for a non-string. */
export type TextProblem = "type" | "minLength" | "maxLength" | "pattern" | "format";

const patterns = new Map<string, RegExp>();
const regexOf = (pattern: string): RegExp => {
  let re = patterns.get(pattern);
  if (!re) {
    re = new RegExp(pattern, "u");
    patterns.set(pattern, re);
  }
  return re;
};

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** RFC 3339 `date-time` (section 5.6), every field in range, that `Date.parse` reads (see {@link dateTimeMs}). */
const isDateTime = (s: string): boolean => dateTimeMs(s) !== undefined;

/**
 * Milliseconds since the epoch of an RFC 3339 `date-time`, or undefined when `s` is not one. Second 60 is a leap
 * second, valid only at 23:59 UTC (sections 5.6, 5.7; ajv-formats checks the same); POSIX time has none, so it
 * reads as the last millisecond of its minute (`23:59:59.999`), never later than the second that follows.
 */
export function dateTimeMs(s: string): number | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const [y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0, oh = 0, om = 0] = m
    .slice(1)
    .map((x) => (x === undefined ? 0 : Number(x)));
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (mo < 1 || mo > 12 || d < 1 || d > days || h > 23 || mi > 59 || se > 60 || oh > 23 || om > 59) return undefined;
  if (se < 60) {
    const ms = Date.parse(s);
    return Number.isFinite(ms) ? ms : undefined;
  }
  const ms = Date.parse(`${s.slice(0, 17)}59${s.slice(19).replace(/^\.\d+/, "")}`) + 999;
  const utc = new Date(ms);
  return Number.isFinite(ms) && utc.getUTCHours() === 23 && utc.getUTCMinutes() === 59 ? ms : undefined;
}

/** Formats checked here as JSON Schema defines them; others are TypeBox's registry's. */
const FORMATS: Record<string, (s: string) => boolean> = { "date-time": isDateTime };

/** Characters (code points) in `s`; a lone surrogate counts as one, as JSON Schema validators count it. */
export function charCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++, n++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
  }
  return n;
}

/** The first rule of `schema` that `value` breaks, or undefined; lengths in code points. */
export function textProblem(schema: TextOptions, value: unknown): TextProblem | undefined {
  if (typeof value !== "string") return "type";
  const { minLength, maxLength } = schema;
  if (
    minLength !== undefined &&
    (value.length < minLength || (value.length < 2 * minLength && charCount(value) < minLength))
  )
    return "minLength";
  if (
    maxLength !== undefined &&
    value.length > maxLength &&
    (value.length > 2 * maxLength || charCount(value) > maxLength)
  )
    return "maxLength";
  if (schema.pattern !== undefined && !regexOf(schema.pattern).test(value)) return "pattern";
  if (schema.format !== undefined && !(FORMATS[schema.format] ?? FormatRegistry.Get(schema.format))?.(value))
    return "format";
  return undefined;
}

if (!TypeRegistry.Has(TEXT_KIND))
  TypeRegistry.Set<TextOptions>(TEXT_KIND, (schema, value) => textProblem(schema, value) === undefined);

/**
 * A string schema with lengths in characters; use it for every request string with a length limit.
 * @throws SyntaxError at once when `pattern` is not a valid Unicode-mode regular expression
 */
export function Text(options: TextOptions = {}): TUnsafe<string> {
  if (options.pattern !== undefined) regexOf(options.pattern);
  return Type.Unsafe<string>({ ...options, [Kind]: TEXT_KIND, type: "string" });
}

/** True for a schema made by {@link Text}. */
export const isText = (schema: unknown): schema is TextOptions =>
  (schema as { [Kind]?: unknown } | undefined)?.[Kind] === TEXT_KIND;
